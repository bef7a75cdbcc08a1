import { errorMessage } from '../errorMessage';
import { PROMPT_FILE, writePromptIfUnchanged, type PromptFilePort } from '../prompt/promptFile';
import { RegistryError, type Evaluation, type Lineage, type PromptRegistry, type PromptVersion } from './registry';
import { changedLines, checkFrozen, drift } from './textMetrics';
import { isKindError } from '../kindError';

/**
 * The review queue's two ways out besides a re-test (docs/architecture.md,
 * "Prompt evolution"): Dismiss drops a near-miss; Promote Anyway is a
 * person's override of the gate. The override still needs the frozen-block
 * check to pass, and the candidate must have been tested against the prompt
 * in force; the registry records it as a promotion whose lineage says a
 * person decided.
 */

export type ReviewResult =
  | { readonly ok: true; readonly summary: string; readonly version?: PromptVersion }
  | { readonly ok: false; readonly reason: string };

/** Removes `candidateId` from the review queue; its evaluations stay. */
export async function dismissNearMiss(registry: PromptRegistry, candidateId: string): Promise<ReviewResult> {
  if ((await queued(registry, candidateId)) === undefined) return { ok: false, reason: `no near-miss ${candidateId} in the review queue` };
  await registry.dismissCandidate(candidateId);
  return { ok: true, summary: `${candidateId} dismissed; it left the review queue` };
}

/**
 * Writes the near-miss as the prompt in force and records it as a human
 * override. Refused when it is not in the queue, was tested against another
 * prompt than the one in force (re-test it first), would change a frozen
 * block, or the prompt file changed meanwhile.
 */
export async function promoteNearMiss(registry: PromptRegistry, promptFile: PromptFilePort, candidateId: string): Promise<ReviewResult> {
  const nearMiss = await queued(registry, candidateId);
  if (nearMiss === undefined) return { ok: false, reason: `no near-miss ${candidateId} in the review queue` };
  const start = await promptFile.read();
  if (start.refused !== undefined) return { ok: false, reason: `${start.refused}; nothing was written` };
  const head = await registry.current();
  const inForce = await registry.versionWithText(start.text);
  if (head === undefined || inForce?.id !== head.id || head.id !== nearMiss.baselineVersion) {
    return { ok: false, reason: `${candidateId} was tested against another prompt than the one in force; re-test it first` };
  }
  // The gate's own first check, against the prompt in force now.
  const frozen = checkFrozen(start.text, nearMiss.text);
  if (frozen.kind !== 'ok') {
    return { ok: false, reason: `${candidateId} does not keep the frozen blocks of ${PROMPT_FILE} (${frozen.kind}); Promote Anyway needs the frozen-block check to pass` };
  }
  const stats = nearMiss.stats;
  if (stats === undefined) return { ok: false, reason: `${candidateId} has no A/B numbers to record` };
  const root = (await registry.version(head.root))?.text ?? start.text;
  const lineage: Lineage & { readonly humanOverride: { readonly failedCheck: string } } = {
    ...stats,
    editDistance: changedLines(start.text, nearMiss.text),
    drift: drift(root, nearMiss.text),
    taskSetHash: nearMiss.taskSetHash ?? '',
    model: nearMiss.model ?? '',
    humanOverride: { failedCheck: nearMiss.failed ?? 'unknown' },
  };
  let version: PromptVersion;
  try {
    version = await registry.promoteAnyway(candidateId, head.id, nearMiss.text, lineage);
  } catch (err) {
    if (isKindError(err, RegistryError)) return { ok: false, reason: err.message };
    throw err;
  }
  const written = await writePromptIfUnchanged(promptFile, nearMiss.text, start, `Candor: promote ${candidateId} anyway`).catch((err: unknown) => ({ ok: false as const, reason: errorMessage(err) }));
  if (!written.ok) {
    // Recorded before the write: record that it never took effect.
    await registry.rollback(head.id);
    return { ok: false, reason: `${written.reason}; the registry records the promotion as withdrawn` };
  }
  return { ok: true, version, summary: `${candidateId} promoted anyway (a human override of ${lineage.humanOverride.failedCheck}); written to ${PROMPT_FILE} and saved` };
}

async function queued(registry: PromptRegistry, candidateId: string): Promise<Evaluation | undefined> {
  return (await registry.nearMisses()).find((e) => e.candidateId === candidateId);
}
