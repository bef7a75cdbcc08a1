/**
 * A payload as the context ledger measures it (ledger.ts), and the mark an
 * anchor keeps of it: what the gate projects from.
 */

/** A text sent beside the messages (system prompt, tool list), as a mark remembers it. */
export interface PartMark {
  /** A hash of the text: the mark is stored in the session file, the text is not. */
  readonly key: string;
  readonly tokens: number;
  readonly features: readonly number[];
}

/** Where the payload stood when a request was sent: plain JSON. */
export interface PayloadMark {
  /** The compaction the history descends from ('' before the first one). */
  readonly epoch: string;
  /** History messages sent. */
  readonly messages: number;
  readonly system: PartMark;
  readonly tools: PartMark;
}

/** What changed in the payload since a mark. */
export interface PayloadChange {
  readonly tokens: number;
  readonly features: readonly number[];
  /** The texts beside the history that changed (memory, prompt version, tool list). */
  readonly parts: readonly ('system' | 'tools')[];
}

/** One payload, measured. */
export interface PayloadMeasure {
  /** The whole payload: exact counts where they are ready, the heuristic for the rest. */
  readonly tokens: number;
  /** Characters per script class of the whole payload, and its message count. */
  readonly features: readonly number[];
  /** The tokenizer's name, or 'heuristic' when the model has none. */
  readonly counter: string;
  /** Parts still counted by the heuristic while their exact count is on its way (or by their length, while a reload is measured). */
  readonly pending: number;
  /** Messages of a reloaded history not measured yet: counted by their length alone. */
  readonly rough: number;
  readonly mark: PayloadMark;
  /** What changed since `mark`; undefined when the history is not a continuation of it. */
  since(mark: PayloadMark): PayloadChange | undefined;
}
