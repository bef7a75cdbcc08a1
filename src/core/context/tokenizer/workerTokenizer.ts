import * as path from 'node:path';
import type { TiktokenEncodingName, TokenCounter } from '../estimator';
import { TokenizerThread } from './tokenizerThread';

/**
 * js-tiktoken builds its rank tables in the constructor: about six seconds
 * for o200k_base on a small machine, all of it synchronous. In the extension
 * host that would freeze every extension, so the tokenizer lives in a worker
 * thread and the host asks it for counts.
 */

export interface TokenizerModules {
  /** A CommonJS module exporting `Tiktoken` (js-tiktoken/lite, or its bundle). */
  readonly tiktoken: string;
  /** The ranks module of an encoding. */
  readonly ranks: (encoding: TiktokenEncodingName) => string;
}

/** Paths inside a bundle folder (the packaged extension and CLI: dist/). */
export function bundledTokenizerModules(distDir: string): TokenizerModules {
  return {
    tiktoken: path.join(distDir, 'tiktoken-lite.js'),
    ranks: (encoding) => path.join(distDir, 'ranks', `${encoding}.js`),
  };
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let tokenizer;
let pieces;
try {
  const { Tiktoken } = require(workerData.tiktoken);
  const loaded = require(workerData.ranks);
  const ranks = loaded.default || loaded;
  tokenizer = new Tiktoken(ranks);
  // The encoding's own pattern: the pieces its merges never cross.
  pieces = new RegExp(ranks.pat_str, 'gu');
  parentPort.postMessage({ ready: true });
} catch (err) {
  parentPort.postMessage({ failed: String(err && err.message || err) });
}
const count = (t) => (t.length === 0 ? 0 : tokenizer.encode(t, [], []).length);
function split(text) {
  let ascii = 0;
  let run = '';
  const others = [];
  const tokens = [];
  for (const [piece] of text.matchAll(pieces)) {
    if (/^[\\x00-\\x7f]*$/.test(piece)) {
      run += piece;
      continue;
    }
    ascii += count(run);
    run = '';
    others.push(piece);
    tokens.push(count(piece));
  }
  return { ascii: ascii + count(run), pieces: others, tokens };
}
parentPort.on('message', ({ id, texts, split: splitting }) => {
  try {
    parentPort.postMessage({ id, answer: splitting ? texts.map(split) : texts.map(count) });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
  }
});
`;

/**
 * A text as the encoding splits it before merging: the tokens of its ASCII
 * pieces, and each other piece with its own tokens (for a tokenizer that
 * shares this one's ASCII).
 */
export interface AsciiSplit {
  readonly ascii: number;
  readonly pieces: readonly string[];
  readonly tokens: readonly number[];
}

type Answer = number[] | AsciiSplit[];

/** The tokenizer port over js-tiktoken in a worker thread: counts never block the caller's thread. */
export class WorkerTokenizer implements TokenCounter {
  readonly name: string;
  private readonly thread: TokenizerThread<Answer>;

  constructor(readonly encoding: TiktokenEncodingName, modules: TokenizerModules) {
    this.name = encoding;
    this.thread = new TokenizerThread(WORKER_SOURCE, { tiktoken: modules.tiktoken, ranks: modules.ranks(encoding) }, `the ${encoding} tokenizer`);
  }

  get ready(): Promise<void> {
    return this.thread.ready;
  }

  async count(texts: readonly string[]): Promise<number[]> {
    return (await this.ask(texts, false)) as number[];
  }

  /** Each text split as the encoding splits it: each run of ASCII pieces counted, the other pieces returned with their counts. */
  async split(texts: readonly string[]): Promise<AsciiSplit[]> {
    return (await this.ask(texts, true)) as AsciiSplit[];
  }

  private async ask(texts: readonly string[], split: boolean): Promise<Answer> {
    if (texts.length === 0) return [];
    return this.thread.ask({ texts, split });
  }

  dispose(): void {
    this.thread.dispose();
  }
}
