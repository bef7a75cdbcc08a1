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
  /** Of `tokens`, those no text carries (see PayloadMeasure.constants); absent in marks stored before it existed. */
  readonly constants?: number;
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
  /** Of `tokens`, those no text carries (see PayloadMeasure.constants). */
  readonly constants?: number;
}

/** One payload, measured. */
export interface PayloadMeasure {
  /** The whole payload: exact counts where they are ready, the heuristic for the rest. */
  readonly tokens: number;
  /**
   * Of `tokens`, those no text carries and so no feature measures: the
   * reply's priming, a name's token, the frames of the tool definitions
   * (toolRendering.ts). A message's own 3 are in the `messages` feature. An
   * estimate fitted over the features adds these as they are.
   */
  readonly constants?: number;
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

/** A tool list's count per definition: the figures a listing of tools shows ("tools: 31, 6.2K tokens"). */
export interface ToolCounts {
  /** The whole list: its tools and its frame. */
  readonly tokens: number;
  /** What the list adds once, whatever its length. */
  readonly list: number;
  readonly tools: readonly { readonly name: string; readonly tokens: number }[];
}
