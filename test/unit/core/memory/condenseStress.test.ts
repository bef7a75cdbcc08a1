import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { condenseMemory, type CondenseOutcome } from '../../../../src/core/memory/condense';
import { appendEntry } from '../../../../src/core/memory/memory';
import { isValidUtf8 } from '../../../../src/core/memory/bytes';
import { parseScenario } from '../../../../src/core/offline/scenario';
import { prng, seedNotes, sleep, startModelServer, tempFolder, tempLeftovers, type ModelServer } from './helpers';

const ROUNDS = 30;
const SEED = Number(process.env.CANDOR_STRESS_SEED ?? 20261130);
const ALPHABET = [...'記憶漢字かなカナ한글中文測試🎉🚀✍️🧠👩‍💻é'];

/**
 * What this proves. A writer appends uniquely numbered multibyte lines at
 * random moments while condenses run back to back with random request hold
 * times. The scripted summary never contains a line, so a line can be in the
 * final file only if it survived verbatim (never snapshotted, or carried).
 * We learn each successful condense's snapshot from the request the server
 * saw. Then, for every line written:
 *   - if a successful condense sent it to the model, it was legitimately
 *     summarized away and must appear zero times (it cannot be carried: it
 *     was before that snapshot's end);
 *   - otherwise it must appear exactly once, byte for byte.
 * Lines written while a summary was pending fall in the second case, so none
 * of them is lost and none is duplicated. Every condense must end `ok` or
 * `not-smaller`: the writer only appends, so any other reason is a bug.
 */
describe('memory condense: stress, a writer racing a loop of condenses', () => {
  let model: ModelServer;
  let dir: string;
  let file: string;

  beforeEach(async () => {
    model = await startModelServer();
    dir = tempFolder();
    file = path.join(dir, 'memory.md');
    fs.writeFileSync(file, seedNotes(20));
  });
  afterEach(async () => model.close());

  for (const [writerName, allowed] of [
    ['the remember tool (appendEntry)', ['not-smaller']],
    ['a plain async append that bypasses the in-process queue, like another process', ['not-smaller', 'still-growing']],
  ] as const) {
    it(`${ROUNDS} condenses against ${writerName}: every appended line is present exactly once unless summarized`, async function () {
      this.timeout(20_000);
      const random = prng(SEED + writerName.length);
      let rounds = 0;
      model.usePerRequest(() =>
        parseScenario({ rules: [{ respond: { text: `- summary ${rounds}: 要約\n` }, holdMs: Math.floor(random() * 50) }] }),
      );

      const written: string[] = [];
      let stop = false;
      const append = writerName.startsWith('the remember')
        ? (text: string) => appendEntry(file, text, new Date())
        : (text: string) => fsp.appendFile(file, `\n${text}\n`);
      const writer = (async () => {
        while (!stop) {
          await sleep(Math.floor(random() * 6));
          const text = `<<${written.length}>> ${randomText(random)}`;
          written.push(text);
          await append(text);
        }
      })();

      const outcomes: CondenseOutcome[] = [];
      const summarized = new Set<number>();
      for (; rounds < ROUNDS; rounds++) {
        const requestIndex = model.server.requests.length;
        const outcome = await condenseMemory({ file, model: model.model, unsavedFiles: () => [] });
        outcomes.push(outcome);
        if (outcome.ok) for (const n of lineNumbers(model.server.requests[requestIndex]?.lastUser ?? '')) summarized.add(n);
        else assert.ok((allowed as readonly string[]).includes(outcome.reason), `round ${rounds}: ${outcome.reason}: ${outcome.detail}`);
        await sleep(Math.floor(random() * 10));
      }
      stop = true;
      await writer;

      const final = fs.readFileSync(file);
      assert.ok(isValidUtf8(final), 'no character was torn');
      const text = final.toString('utf8');
      written.forEach((line, n) => {
        const count = text.split(`\n${line}\n`).length - 1;
        assert.equal(count, summarized.has(n) ? 0 : 1, `line ${n} (${summarized.has(n) ? 'summarized' : 'not summarized'}) appears ${count} times`);
      });
      for (const n of lineNumbers(text)) assert.ok(n < written.length, `line ${n} was never written`);
      assert.deepEqual(tempLeftovers(dir), []);

      // Not vacuous: condenses succeeded, carried lines and summarized others.
      const successes = outcomes.filter((o) => o.ok);
      assert.ok(successes.length >= 5, `${successes.length} successful condenses`);
      assert.ok(successes.some((o) => o.carriedBytes > 0), 'some condense carried appended lines');
      assert.ok(summarized.size > 0 && summarized.size < written.length, `${summarized.size} of ${written.length} lines summarized`);
    });
  }
});

function lineNumbers(text: string): number[] {
  return [...text.matchAll(/<<(\d+)>>/g)].map((m) => Number(m[1]));
}

function randomText(random: () => number): string {
  const length = 3 + Math.floor(random() * 20);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[Math.floor(random() * ALPHABET.length)];
  return out;
}
