/**
 * The folder of installed dependencies, in a scratch clone or a workspace.
 * In a clone, setup fills it, and it is kept across runs while the lock
 * file is unchanged; every other command may only read it.
 */
export const DEPENDENCY_DIR = 'node_modules';
