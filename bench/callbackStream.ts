/**
 * The request path before it became a stream of events, kept only as the
 * baseline of bench/request.bench.ts: one attempt over the SDK with the
 * reply handed to a callback delta by delta, a timer re-armed per chunk,
 * the reply assembled and returned at the end. Its error handling is left
 * out (the bench measures replies that complete).
 */
import type { ChatMessage } from '../src/core/messages';
import type { createClient } from '../src/core/provider/openaiModel';

/** The SDK's client, named through the one module that imports the SDK. */
type Client = ReturnType<typeof createClient>;
type Messages = Parameters<Client['chat']['completions']['create']>[0]['messages'];

export interface CallbackReply {
  readonly content: string;
  readonly finishReason: string | undefined;
  readonly promptTokens: number | undefined;
}

export async function callbackStream(client: Client, model: string, messages: readonly ChatMessage[], idleTimeoutMs: number, onText: (delta: string) => void): Promise<CallbackReply> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(), idleTimeoutMs);
  };
  let content = '';
  let finishReason: string | undefined;
  let promptTokens: number | undefined;
  const calls = new Map<number, { id: string; name: string; args: string }>();
  try {
    arm();
    const stream = await client.chat.completions.create(
      { model, messages: [...messages] as Messages, stream: true, stream_options: { include_usage: true } },
      { signal: controller.signal },
    );
    for await (const chunk of stream) {
      arm();
      if (chunk.usage && typeof chunk.usage.prompt_tokens === 'number') promptTokens = chunk.usage.prompt_tokens;
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      if (choice.delta?.content) {
        content += choice.delta.content;
        onText(choice.delta.content);
      }
      for (const call of choice.delta?.tool_calls ?? []) {
        const slot = calls.get(call.index) ?? { id: '', name: '', args: '' };
        if (call.id) slot.id = call.id;
        if (call.function?.name) slot.name += call.function.name;
        if (call.function?.arguments) slot.args += call.function.arguments;
        calls.set(call.index, slot);
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
  } finally {
    clearTimeout(timer);
  }
  return { content, finishReason, promptTokens };
}
