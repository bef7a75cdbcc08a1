/**
 * The fixed identity of every commit Candor makes: in the scratch clone of
 * the agent's repository (evolution) and in a command view's own git
 * (commands/view). One name and address, so a commit of Candor's is always
 * recognisable as one.
 */
export const CANDOR_NAME = 'Candor';
export const CANDOR_EMAIL = 'candor@localhost';

/** The same identity as `git -c` pairs. */
export const CANDOR_IDENTITY = [`user.name=${CANDOR_NAME}`, `user.email=${CANDOR_EMAIL}`] as const;
