import type { TextModel } from '../provider/chatModel';
import { type AbFailure, type AbNote, type AbProgress, runAbTest } from './abTest';
import type { PairedScore } from './paired';
import { type CandidateHistory, type CandidateVerdict, type GateDecision, cheapChecks, evaluateCandidates } from './promotionGate';
import { type Candidate, type Evidence, type ProposalResult, candidateId, proposeCandidates } from './proposer';
import type { Lineage, PromptRegistry, PromptVersion } from './registry';
import { type PromptEvolutionSettings, resolveSettings } from './settings';
import type { TaskSet } from './taskSet';
import { newId } from '../ids';
import { environmentSecrets, type SecretSet } from '../redact';

/**
 * One prompt-evolution run: propose → cheap checks (frozen sections, edit
 * distance, drift) → A/B test of the survivors only → the gate → the outcome,
 * recorded in the registry when one is given. Writing the promoted prompt to
 * `.candor/prompt.md` is the caller's job (a WorkspaceEdit in VS Code, a
 * checked file write in the CLI).
 */

export interface EvolveInput {
  /** The model both prompts run on in the A/B test (and, by default, the proposer and the judge). */
  readonly model: TextModel;
  /** Its name, recorded in the lineage. */
  readonly modelName: string;
  readonly proposer?: TextModel;
  readonly judge?: TextModel;
  /** The prompt in force. */
  readonly current: string;
  /** The root original that drift is measured from; default: the root of `current` in the registry's workspace scope, else `current`. */
  readonly root?: string;
  readonly taskSet: TaskSet;
  readonly evidence?: Evidence;
  /** Test these texts instead of asking the proposer (a re-test from the review queue, the CLI). */
  readonly candidates?: readonly string[];
  /**
   * Opened for the workspace being evolved (its scope): the baseline, its
   * root, the re-test history and the recorded outcome all stay in that scope.
   */
  readonly registry?: PromptRegistry;
  readonly settings?: Partial<PromptEvolutionSettings>;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: EvolveProgress) => void;
  /**
   * Removed from candidates, failure messages and details before anything is
   * recorded or returned (a provider's error may echo the key). Default: the
   * environment's key, and credential patterns.
   */
  readonly secrets?: SecretSet;
}

export type EvolveStage = 'propose' | 'cheap-checks' | 'ab-test' | 'gate' | 'record';

export type EvolveProgress =
  | { readonly stage: Exclude<EvolveStage, 'ab-test'> }
  | ({ readonly stage: 'ab-test' } & AbProgress);

export interface AbSummary {
  /** Arm runs made: zero when no candidate survived the cheap checks. */
  readonly runs: number;
  readonly failures: readonly AbFailure[];
  readonly notes: readonly AbNote[];
}

export type EvolveResult =
  | {
      readonly kind: 'decided';
      readonly run: string;
      readonly outcome: GateDecision['outcome'];
      readonly decision: GateDecision;
      readonly candidates: readonly Candidate[];
      readonly ab: AbSummary;
      /** The registry version the candidates were compared with. */
      readonly baselineVersion?: string;
      /** outcome 'promote': the winning candidate, and its registry version when a registry was given. */
      readonly winner?: Candidate;
      readonly promoted?: PromptVersion;
    }
  | { readonly kind: 'no-tasks'; readonly detail: string }
  | { readonly kind: 'no-candidates'; readonly reason: 'unparseable' | 'no-usable-candidate' | 'model-error'; readonly detail: string }
  | { readonly kind: 'cancelled'; readonly stage: EvolveStage };

export async function evolvePrompt(input: EvolveInput): Promise<EvolveResult> {
  const settings = resolveSettings(input.settings);
  const secrets = input.secrets ?? environmentSecrets();
  const run = newId();
  const progress = input.onProgress ?? (() => undefined);
  if (input.taskSet.tasks.length === 0) return { kind: 'no-tasks', detail: 'no tasks in .candor/evals/*.jsonl' };

  const baseline = input.registry ? await input.registry.ensureCurrent(input.current) : undefined;
  const root = input.root ?? (baseline && input.registry ? (await input.registry.version(baseline.root))?.text : undefined) ?? input.current;

  progress({ stage: 'propose' });
  const proposal = await proposeOrTake(input, settings);
  if (proposal.kind === 'none') return proposal.reason === 'cancelled' ? { kind: 'cancelled', stage: 'propose' } : { kind: 'no-candidates', reason: proposal.reason, detail: secrets.redact(proposal.detail) };
  if (proposal.candidates.length === 0) return { kind: 'no-candidates', reason: 'no-usable-candidate', detail: 'every given candidate equals the current prompt' };
  if (input.signal?.aborted) return { kind: 'cancelled', stage: 'propose' };

  progress({ stage: 'cheap-checks' });
  // A candidate that carries a key (copied from evidence or made up) is tested, recorded and promoted without it.
  const candidates = proposal.candidates.map((c) => redactCandidate(c, secrets));
  const survivors = candidates.filter((c) => cheapChecks(input.current, root, c.text, settings).every((check) => check.passed));
  const histories = new Map<string, CandidateHistory>();
  if (input.registry && baseline) {
    for (const survivor of survivors) histories.set(survivor.id, await input.registry.history(survivor.id, baseline.id));
  }

  const tested = await abTestSurvivors(input, settings, survivors, histories, secrets);
  if (tested === 'cancelled') return { kind: 'cancelled', stage: 'ab-test' };
  const { ab, pairs } = tested;

  progress({ stage: 'gate' });
  const decision = evaluateCandidates({
    current: input.current,
    root,
    settings,
    candidates: candidates.map((c) => ({ id: c.id, text: c.text, pairs: pairs.get(c.id), history: histories.get(c.id) })),
  });
  const winner = decision.outcome === 'promote' ? candidates.find((c) => c.id === decision.winner.id) : undefined;

  let promoted: PromptVersion | undefined;
  if (input.registry && baseline) {
    progress({ stage: 'record' });
    promoted = await recordDecision(input.registry, { run, baseline, decision, candidates, survivors, pairs, winner, taskSetHash: input.taskSet.hash, model: input.modelName });
  }
  return { kind: 'decided', run, outcome: decision.outcome, decision, candidates, ab, baselineVersion: baseline?.id, winner, promoted };
}

/** The given texts (a re-test, the CLI), or the proposer's candidates. */
async function proposeOrTake(input: EvolveInput, settings: PromptEvolutionSettings): Promise<ProposalResult | { readonly kind: 'ok'; readonly candidates: readonly Candidate[] }> {
  if (input.candidates) return { kind: 'ok', candidates: givenCandidates(input.candidates, input.current) };
  return proposeCandidates({
    model: input.proposer ?? input.model,
    current: input.current,
    evidence: input.evidence ?? {},
    count: settings.candidates,
    maxChangedLines: settings.maxChangedLines,
    signal: input.signal,
  });
}

type CandidatePairs = ReadonlyMap<string, readonly PairedScore[]>;

/** The A/B test of the candidates that passed the cheap checks: none made when none did. */
async function abTestSurvivors(
  input: EvolveInput,
  settings: PromptEvolutionSettings,
  survivors: readonly Candidate[],
  histories: ReadonlyMap<string, CandidateHistory>,
  secrets: SecretSet,
): Promise<{ readonly ab: AbSummary; readonly pairs: CandidatePairs } | 'cancelled'> {
  if (survivors.length === 0) return { ab: { runs: 0, failures: [], notes: [] }, pairs: new Map() };
  const progress = input.onProgress ?? (() => undefined);
  const result = await runAbTest({
    model: input.model,
    judge: input.judge,
    tasks: input.taskSet.tasks,
    baseline: input.current,
    candidates: survivors,
    alreadyScored: new Map([...histories].map(([id, h]) => [id, new Set(h.scoredTaskIds)])),
    concurrency: settings.concurrency,
    signal: input.signal,
    onProgress: (p) => progress({ stage: 'ab-test', ...p }),
  });
  if (result.kind === 'cancelled') return 'cancelled';
  return {
    ab: { runs: result.runs, failures: result.failures.map((f) => ({ ...f, message: secrets.redact(f.message) })), notes: secrets.redactDeep(result.notes) },
    pairs: new Map(result.pairs),
  };
}

interface DecisionRecord {
  readonly run: string;
  readonly baseline: PromptVersion;
  readonly decision: GateDecision;
  readonly candidates: readonly Candidate[];
  /** The candidates that reached the A/B test. */
  readonly survivors: readonly Candidate[];
  readonly pairs: CandidatePairs;
  readonly winner: Candidate | undefined;
  readonly taskSetHash: string;
  readonly model: string;
}

/** Every verdict goes to the registry; a winner becomes the registry's new version. */
async function recordDecision(registry: PromptRegistry, record: DecisionRecord): Promise<PromptVersion | undefined> {
  const { decision, baseline } = record;
  await registry.recordEvaluations(
    decision.verdicts.map((verdict) => {
      const candidate = record.candidates.find((c) => c.id === verdict.id) as Candidate;
      return {
        run: record.run,
        candidateId: candidate.id,
        baselineVersion: baseline.id,
        text: candidate.text,
        verdict: verdict.kind,
        failed: verdict.failed,
        tested: record.survivors.includes(candidate),
        taskIds: (record.pairs.get(candidate.id) ?? []).map((p) => p.taskId),
        checks: verdict.checks,
        stats: verdict.stats,
        taskSetHash: record.taskSetHash,
        model: record.model,
      };
    }),
  );
  if (decision.outcome !== 'promote' || !record.winner) return undefined;
  return registry.promote(baseline.id, record.winner.text, lineageOf(decision.winner, record.taskSetHash, record.model));
}

function redactCandidate(candidate: Candidate, secrets: SecretSet): Candidate {
  const text = secrets.redact(candidate.text);
  const rationale = candidate.rationale === undefined ? undefined : secrets.redact(candidate.rationale);
  if (text === candidate.text && rationale === candidate.rationale) return candidate;
  // The id names the text: a changed text is another candidate.
  return { id: candidateId(text), text, ...(rationale === undefined ? {} : { rationale }) };
}

function givenCandidates(texts: readonly string[], current: string): Candidate[] {
  const seen = new Set<string>([candidateId(current)]);
  const out: Candidate[] = [];
  for (const text of texts) {
    const id = candidateId(text);
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({ id, text });
  }
  return out;
}

function lineageOf(verdict: CandidateVerdict, taskSetHash: string, model: string): Lineage {
  const stats = verdict.stats;
  if (!stats) throw new Error('a promoted candidate always has A/B numbers');
  const number = (name: 'edit_distance' | 'drift'): number => {
    const check = verdict.checks.find((c) => c.name === name);
    return typeof check?.value === 'number' ? check.value : Number.NaN;
  };
  return {
    n: stats.n,
    b: stats.b,
    c: stats.c,
    effect: stats.effect,
    p: stats.p,
    adjustedAlpha: stats.adjustedAlpha,
    editDistance: number('edit_distance'),
    drift: number('drift'),
    taskSetHash,
    model,
  };
}
