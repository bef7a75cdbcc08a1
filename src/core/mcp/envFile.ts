/**
 * Where a definition's `envFile` is, and what it says. A workspace
 * definition's envFile must lie inside its folder by real path: a `..`
 * segment is refused outright (a symlinked folder before it would make the
 * system's `..` and the text's `..` two different places), and a symlink
 * that leads out is refused after resolving. The file read is the resolved
 * one, so a link swapped after the check is not followed.
 */
import * as path from 'node:path';
import { readBounded } from '../boundedRead';
import { errorMessage } from '../errorMessage';
import { isInside, realOrResolved, realPathLenient } from '../realPath';
import { quoteName } from './display';
import { parseDotenv } from './dotenv';
import { ExpandRefusal } from './refusal';
import type { McpSource } from './types';

/** An envFile larger than this is not read by the default reader. */
const MAX_ENV_FILE_BYTES = 1024 * 1024;

/** The real path of the envFile `file` (already expanded), or the refusal. */
export function locateEnvFile(file: string, source: McpSource, folder: string | undefined): string {
  const shown = quoteName(file);
  if (source.kind === 'workspace' && file.split(/[\\/]/).includes('..')) {
    throw new ExpandRefusal('refused', `"envFile" ${shown} has a ".." in it; a workspace definition's envFile must lie inside its folder`);
  }
  if (!path.isAbsolute(file) && folder === undefined) throw new ExpandRefusal('refused', `"envFile" ${shown} is relative, and no workspace folder is open`);
  const absolute = folder === undefined ? file : path.resolve(folder, file);
  if (source.kind === 'workspace' && !isInside(realPathLenient(source.folder), realPathLenient(absolute))) {
    throw new ExpandRefusal('refused', `"envFile" ${shown} leads out of the workspace folder ${quoteName(source.folder)}`);
  }
  return realOrResolved(absolute);
}

/** The variables of the envFile; a file that cannot be read refuses the server, as it stops VS Code's. */
export async function readServerEnvFile(
  file: string,
  source: McpSource,
  folder: string | undefined,
  read: (file: string) => Promise<string> = readDefault,
): Promise<Record<string, string>> {
  const real = locateEnvFile(file, source, folder);
  try {
    return parseDotenv(await read(real));
  } catch (err) {
    throw new ExpandRefusal('refused', `"envFile" ${quoteName(file)} cannot be read: ${errorMessage(err)}`);
  }
}

async function readDefault(file: string): Promise<string> {
  const bytes = await readBounded(file, MAX_ENV_FILE_BYTES, file);
  if (bytes === undefined) throw new Error('there is no such file');
  return bytes.toString('utf8');
}
