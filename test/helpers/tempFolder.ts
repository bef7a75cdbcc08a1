import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * A fresh folder in the system's temp folder for each test of the `describe`
 * that calls this, removed after the test; the function returned reads it
 * (its real path).
 */
export function tempFolderPerTest(prefix: string): () => string {
  let dir = '';
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  return () => dir;
}
