import { manifestNumber } from '../manifest';
import { DEFAULT_FLIPS, DEFAULT_SEED } from './stats';
import { KindError } from '../kindError';

/** `candor.promptEvolution.*`, plus the permutation test's knobs. */
export interface PromptEvolutionSettings {
  /** Candidate edits proposed per run. */
  readonly candidates: number;
  /** Requests in flight during an A/B test. */
  readonly concurrency: number;
  /** Gate: largest edit against the current prompt, in changed lines (≤ passes). */
  readonly maxChangedLines: number;
  /** Gate: largest TF-IDF cosine distance from the root prompt (≤ passes). */
  readonly maxDrift: number;
  /** Gate: fewest paired tasks (≥ passes). */
  readonly minTasks: number;
  /** Gate: fewest tasks on which the two prompts' scores differ (≥ passes). */
  readonly minDiscordant: number;
  /** Gate: the mean per-task score difference must be strictly above this. */
  readonly minEffect: number;
  /** Gate: significance level before Holm's correction (p < adjusted alpha passes). */
  readonly alpha: number;
  /** Random sign flips when a continuous test has more than 20 nonzero differences. */
  readonly permutationFlips: number;
  /** Seed of those flips (mulberry32). */
  readonly seed: number;
}

/** The settings the manifest declares (`candor.promptEvolution.*`), each with the manifest's default. */
export const SETTING_KEYS = ['candidates', 'concurrency', 'maxChangedLines', 'maxDrift', 'minTasks', 'minDiscordant', 'minEffect', 'alpha'] as const;

/** The manifest's defaults (the CLI and the tests start from them, as VS Code does), plus the permutation test's knobs. */
export const DEFAULT_SETTINGS: PromptEvolutionSettings = Object.freeze({
  ...(Object.fromEntries(SETTING_KEYS.map((key) => [key, manifestNumber(`promptEvolution.${key}`)])) as Record<(typeof SETTING_KEYS)[number], number>),
  permutationFlips: DEFAULT_FLIPS,
  seed: DEFAULT_SEED,
});

export class SettingsError extends KindError<'invalid-setting'> {
  override readonly name = 'SettingsError';
  constructor(readonly setting: keyof PromptEvolutionSettings, message: string) {
    super('invalid-setting', `candor.promptEvolution.${setting}: ${message}`);
  }
}

type Rule = (value: number) => boolean;
const positiveInteger: Rule = (v) => Number.isInteger(v) && v >= 1;
const count: Rule = (v) => Number.isInteger(v) && v >= 0;
const unit: Rule = (v) => v >= 0 && v <= 1;

const RULES: Record<keyof PromptEvolutionSettings, [Rule, string]> = {
  candidates: [positiveInteger, 'a whole number ≥ 1'],
  concurrency: [positiveInteger, 'a whole number ≥ 1'],
  maxChangedLines: [count, 'a whole number ≥ 0'],
  maxDrift: [unit, 'a number in 0..1'],
  minTasks: [count, 'a whole number ≥ 0'],
  minDiscordant: [count, 'a whole number ≥ 0'],
  minEffect: [unit, 'a number in 0..1'],
  alpha: [(v) => v > 0 && v < 1, 'a number strictly between 0 and 1'],
  permutationFlips: [positiveInteger, 'a whole number ≥ 1'],
  seed: [(v) => Number.isInteger(v), 'a whole number'],
};

/** Values for the settings as they come (from VS Code's settings, flags, tests), each still to be checked. */
export type PromptEvolutionValues = { readonly [K in keyof PromptEvolutionSettings]?: unknown };

/** Defaults overlaid with the given values; a bad value throws a SettingsError naming it. */
export function resolveSettings(overrides: PromptEvolutionValues = {}): PromptEvolutionSettings {
  const merged: PromptEvolutionValues = { ...DEFAULT_SETTINGS, ...withoutUndefined(overrides) };
  const settings = { ...DEFAULT_SETTINGS };
  for (const key of Object.keys(RULES) as (keyof PromptEvolutionSettings)[]) {
    const [rule, expected] = RULES[key];
    const value = merged[key];
    if (typeof value !== 'number' || !Number.isFinite(value) || !rule(value)) {
      throw new SettingsError(key, `expected ${expected}, got ${String(value)}`);
    }
    settings[key] = value;
  }
  return Object.freeze(settings);
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
