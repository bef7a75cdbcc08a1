import type { Identity } from '../modelIdentity';
import type { WarningKind } from '../context/transitions';
import type { SessionRecord } from '../session/records';
import type { ServerKind } from '../provider/localServers';
import { shortModelName } from '../provider/modelName';

// What the chat says about the context gate, and the turn its Retry sends.

/**
 * What the chat says when a loss window warns: once per window, never per
 * request, as the reply without usage ends (the gate's `afterRequest`) or, for
 * a loss found only when the next request is projected, then.
 */
export function warningText(warning: { readonly warningKind?: WarningKind }, identity: Identity): string {
  const model = shortModelName(identity.model);
  return warning.warningKind === 'usage-unsupported'
    ? `This server never reports usage in streams (${model} @ ${identity.provider}): the context gauge is an estimate, not the server's count. This is said once; the drift view counts it.`
    : `The provider did not report usage for the last reply: the context count is now an estimate (${model} @ ${identity.provider}). This is counted in the drift view.`;
}

/**
 * What the chat says, once per window, of a count that is not an anchor.
 * Ollama's OpenAI endpoint ignores the context size a client asks for and
 * cuts a longer prompt silently to its own `num_ctx`: on Ollama the notice
 * names the two places that set it.
 */
export function suspectText(real: number, est: number, contextWindow: number, serverKind?: ServerKind): string {
  const atWindow = real === contextWindow ? ' (exactly its context window)' : '';
  const ollama = serverKind === 'ollama'
    ? ` Ollama cuts a prompt longer than its context (num_ctx) without an error: start it with a larger OLLAMA_CONTEXT_LENGTH, or give the model a larger context with PARAMETER num_ctx in its Modelfile.`
    : '';
  return `The server reported ${real.toLocaleString('en-US')} prompt tokens where Candor estimates about ${est.toLocaleString('en-US')}${atWindow}: it may have truncated or under-counted the prompt.${ollama} That count is not used as an anchor, so the gauge is an estimate. This is counted in the drift view.`;
}

/**
 * The user message of the newest turn that ended in a retryable error, if
 * that is the last thing that happened. A compaction since does not count:
 * it is how the user acts on a request too large to send before retrying it.
 */
export function retryableTurn(records: readonly SessionRecord[]): string | undefined {
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i];
    if (!record || record.type === 'gate' || record.type === 'partial' || record.type === 'compaction') continue;
    return record.type === 'notice' && record.retryable && record.turn ? record.turn : undefined;
  }
  return undefined;
}
