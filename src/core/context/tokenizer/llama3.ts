import type { TokenCounter } from '../estimator';
import { CLASS_OFFSET, measureText, zeroFeatures } from '../heuristic';
import { LLAMA3_PIECE_RATES } from '../fittedPrior';
import type { AsciiSplit } from './workerTokenizer';

/**
 * Llama 3 counted through cl100k (docs/architecture.md, "Context gate").
 * Llama 3's vocabulary is cl100k's with 28K tokens added, nearly all for
 * other languages, and it splits a text into pieces with cl100k's pattern
 * before merging, so an ASCII piece merges the same way in both: cl100k's
 * count of ASCII text is Llama 3's but for about 1 token in 10,000 (the few
 * ASCII tokens Llama 3 added, such as `tiktoken`). A piece with other
 * characters (Chinese, Korean, accents, emoji) may hold one of the added
 * tokens; it is estimated from its characters and its cl100k count, at
 * rates fitted to Llama 3 by bench/fitRates.ts. Candor ships those numbers,
 * not Llama 3's vocabulary.
 */

/** What the encoding in a worker thread answers: each text split into its ASCII and its other pieces. */
export interface PieceSplitter {
  split(texts: readonly string[]): Promise<AsciiSplit[]>;
}

export class Llama3Counter implements TokenCounter {
  readonly name = 'llama3 via cl100k_base';

  constructor(private readonly cl100k: PieceSplitter) {}

  async count(texts: readonly string[]): Promise<number[]> {
    return (await this.cl100k.split(texts)).map((split) => llama3Tokens(split));
  }
}

/** A text's Llama 3 count from its split: the ASCII pieces exactly, the others estimated (`rates`: the fit script's own). */
export function llama3Tokens(split: AsciiSplit, rates: readonly number[] = LLAMA3_PIECE_RATES): number {
  let others = 0;
  split.pieces.forEach((piece, i) => {
    const features = pieceFeatures(piece, split.tokens[i] ?? 0);
    for (let k = 0; k < features.length; k++) others += (rates[k] ?? 0) * (features[k] ?? 0);
  });
  return split.ascii + Math.max(0, Math.round(others));
}

/** What a non-ASCII piece's estimate reads: the heuristic's features of its characters, its cl100k tokens, and 1 for the piece. */
export function pieceFeatures(piece: string, cl100kTokens: number): number[] {
  const features = zeroFeatures();
  measureText(piece, features);
  return [...features.slice(0, CLASS_OFFSET), cl100kTokens, 1];
}
