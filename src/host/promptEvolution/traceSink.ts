import type { RequestTrace } from '../../core/chat/conversation';
import type { Logger } from '../../core/log';
import type { PromptRegistry } from '../../core/promptEvolution/registry';
import { RegistryWriter } from '../../core/promptEvolution/registryWriter';

/**
 * What the chat feeds traces.sqlite: one trace per request, thumbs up or down
 * on a reply, and rants linked to a session. Queued (RegistryWriter): the chat
 * never waits on the file, and the trace is tagged with the registry version
 * of the prompt that request was built from, looked up off the request's path.
 */
export class TraceSink {
  private readonly writer: RegistryWriter;

  constructor(registry: () => Promise<PromptRegistry>, log: Logger) {
    this.writer = new RegistryWriter({ registry, warn: (line) => log.warn(line) });
  }

  /** Never throws, never waits. */
  trace(t: RequestTrace): void {
    this.writer.push({
      kind: 'trace',
      prompt: t.prompt,
      trace: {
        session: t.session,
        replyId: t.replyId,
        model: t.model,
        provider: t.provider,
        ...(t.promptTokens !== undefined ? { promptTokens: t.promptTokens } : {}),
        ...(t.completionTokens !== undefined ? { completionTokens: t.completionTokens } : {}),
        toolCalls: t.toolCalls.length,
        durationMs: t.durationMs,
        ts: new Date().toISOString(),
      },
    });
  }

  /** Thumbs up or down on a reply (its transcript entry id). */
  feedback(replyId: string, value: 'up' | 'down', session: string): void {
    this.writer.push({ kind: 'signal', signal: { kind: value, replyId, session, ts: new Date().toISOString() } });
  }

  /** A rant saved while a session was open: the proposer reads it as evidence. */
  linkRant(rantId: string, session: string | null): void {
    this.writer.push({ kind: 'signal', signal: { kind: 'rant', rantId, session, ts: new Date().toISOString() } });
  }

  /** Resolves when every queued trace and signal has been written (or given up on). */
  flushed(): Promise<void> {
    return this.writer.flushed();
  }
}
