import * as path from 'node:path';
import type { TokenCounter } from '../estimator';
import { CHAT_FRAMES, type ChatFrames } from '../chatFrames';
import type { TemplateFamily } from '../../modelIdentity';
import { TokenizerThread } from './tokenizerThread';

/**
 * The tokenizer of a family Candor ships (Qwen3, Llama 3, DeepSeek V3: their
 * `tokenizer.json` and `tokenizer_config.json`), run by Hugging Face's
 * tokenizers.js in a worker thread, loaded the first time a model of that
 * family is counted (about a second: the vocabulary is 8–11 MB of JSON).
 * The texts it counts are framed by the family's chat template
 * (chatFrames.ts), so special tokens in them count as the server counts them.
 */

/** Where a family's files are: its two JSON files (and its licence beside them). */
export interface FamilyFiles {
  readonly tokenizer: string;
  readonly config: string;
}

export interface FamilyModules {
  /** A CommonJS module exporting tokenizers.js's `Tokenizer`. */
  readonly tokenizers: string;
  readonly files: (family: TemplateFamily) => FamilyFiles;
}

/** Paths inside a bundle folder (dist/): `hf-tokenizers.js`, `tokenizers/<family>/`. */
export function bundledFamilyModules(distDir: string): FamilyModules {
  return {
    tokenizers: path.join(distDir, 'hf-tokenizers.js'),
    files: (family) => ({ tokenizer: path.join(distDir, 'tokenizers', family, 'tokenizer.json'), config: path.join(distDir, 'tokenizers', family, 'tokenizer_config.json') }),
  };
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
let tokenizer;
try {
  const { Tokenizer } = require(workerData.tokenizers);
  const read = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
  tokenizer = new Tokenizer(read(workerData.tokenizer), read(workerData.config));
  parentPort.postMessage({ ready: true });
} catch (err) {
  parentPort.postMessage({ failed: String(err && err.message || err) });
}
// Special tokens written in a text (a template's frame) are the special tokens; none is added.
const count = (t) => (t.length === 0 ? 0 : tokenizer.encode(t, { add_special_tokens: false }).ids.length);
parentPort.on('message', ({ id, texts }) => {
  try {
    parentPort.postMessage({ id, answer: texts.map(count) });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
  }
});
`;

export class FamilyTokenizer implements TokenCounter {
  readonly name: string;
  readonly frames: ChatFrames;
  private readonly thread: TokenizerThread<number[]>;

  constructor(readonly family: TemplateFamily, modules: FamilyModules) {
    this.name = family;
    this.frames = CHAT_FRAMES[family];
    const files = modules.files(family);
    this.thread = new TokenizerThread(WORKER_SOURCE, { tokenizers: modules.tokenizers, ...files }, `the ${family} tokenizer`);
  }

  get ready(): Promise<void> {
    return this.thread.ready;
  }

  async count(texts: readonly string[]): Promise<number[]> {
    if (texts.length === 0) return [];
    return this.thread.ask({ texts });
  }

  dispose(): void {
    this.thread.dispose();
  }
}
