import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { condenseMemory } from '../../../../src/core/memory/condense';
import { llamaOrSkip, startLlama, type LlamaServer } from '../../../helpers/llamaServer';
import { modelAt } from '../provider/models';
import { seedNotes, tempFolder, tempLeftovers } from './helpers';

/**
 * A summary the server cut at its output limit is half a memory: a real
 * llama.cpp server whose every reply stops at 16 tokens (`-n 16`,
 * `finish_reason: "length"`) writes the summary.
 */
describe('memory condense: a summary cut at the output limit', function () {
  this.timeout(120_000);
  let server: LlamaServer | undefined;
  before(async function () {
    server = await startLlama(llamaOrSkip(this), { ctx: 4096, flags: ['-n', '16'] });
  });
  after(async () => server?.stop());

  it('the trap: the server answers a cut reply, shorter than the file', async () => {
    const dir = tempFolder();
    const file = path.join(dir, 'memory.md');
    const seed = seedNotes();
    fs.writeFileSync(file, seed);
    const reply = await modelAt(server?.baseUrl ?? '').complete([{ role: 'user', content: 'Summarize.' }]);
    assert.ok(reply.length > 0 && Buffer.byteLength(reply) < seed.length, 'a cut reply would pass the size check');
  });

  it('is refused: nothing is written, the memory file is unchanged, the error says why', async () => {
    const dir = tempFolder();
    const file = path.join(dir, 'memory.md');
    const seed = seedNotes();
    fs.writeFileSync(file, seed);
    const outcome = await condenseMemory({ file, model: modelAt(server?.baseUrl ?? ''), unsavedFiles: () => [], pid: 4242 });
    assert.equal(outcome.ok, false, JSON.stringify(outcome));
    if (!outcome.ok) {
      assert.equal(outcome.reason, 'model-failed');
      assert.match(outcome.detail, /cut at the output limit/);
    }
    assert.ok(fs.readFileSync(file).equals(seed), 'the memory file is unchanged');
    assert.equal(fs.existsSync(`${file}.bak`), false, 'no backup either');
    assert.deepEqual(tempLeftovers(dir), []);
  });
});
