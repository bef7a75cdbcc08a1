import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { appendQueue } from '../../src/core/jsonl';

/**
 * A fresh folder in the system's temp folder for each test of the `describe`
 * that calls this, removed after the test; the function returned reads it
 * (its real path). Lines a session still has on their way to disk land
 * first: a write that landed during the removal would stop it.
 */
export function tempFolderPerTest(prefix: string): () => string {
  let dir = '';
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  });
  afterEach(async () => {
    await appendQueue.flushed();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return () => dir;
}
