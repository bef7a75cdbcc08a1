import * as fs from 'node:fs';

/** A regular file this process may execute (a system tool found by its absolute path). */
export function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
