/**
 * Who a request went to: `(provider slug, model)`. The provider port
 * reports it, the context gate keys its anchors and windows on it, the
 * drift log writes it (docs/architecture.md, "Layout"): a home of its own,
 * so that neither `provider/` nor `context/` imports the other for it.
 */
export interface Identity {
  readonly provider: string;
  readonly model: string;
}

/**
 * The family of a model's chat template and tokenizer: what a local server
 * says of its model (`provider/serverFamily.ts`) and what the context gate
 * counts with (`context/chatFrames.ts`).
 */
export type TemplateFamily = 'qwen3' | 'llama3' | 'deepseek_v3';
