import OpenAI from 'openai';
import type { ChatMessage } from '../messages';

/**
 * The smallest model port: messages in, text out. Summaries (compaction,
 * memory condense), triage and prompt proposals use it; the chat loop uses the
 * streaming client directly.
 */
export interface TextModel {
  complete(messages: ChatMessage[], signal?: AbortSignal): Promise<string>;
}

export interface OpenAiTextModelOptions {
  readonly baseURL: string;
  readonly apiKey: string;
  readonly model: string;
  readonly maxOutputTokens?: number;
  readonly timeoutMs?: number;
}

export function openAiTextModel(options: OpenAiTextModelOptions): TextModel {
  const client = new OpenAI({
    baseURL: options.baseURL,
    apiKey: options.apiKey,
    maxRetries: 0,
    timeout: options.timeoutMs ?? 120_000,
  });
  return {
    async complete(messages, signal) {
      const response = await client.chat.completions.create(
        { model: options.model, messages, max_tokens: options.maxOutputTokens, stream: false },
        { signal },
      );
      return response.choices[0]?.message?.content ?? '';
    },
  };
}
