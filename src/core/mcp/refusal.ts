import { KindError } from '../kindError';

/**
 * Why a definition was not expanded: `refused` (a variable it may not use, an
 * envFile outside its folder, a value that cannot be passed on) or
 * `cancelled` (the user did not give an input).
 */
export class ExpandRefusal extends KindError<'cancelled' | 'refused'> {
  override readonly name = 'ExpandRefusal';
}
