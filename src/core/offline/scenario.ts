import { isRecord } from '../text';
import { KindError } from '../kindError';
/**
 * The offline provider's scenario format. A scenario is a list of rules tried
 * in order; the first rule whose `match` fits the request answers it.
 */

export interface RuleMatch {
  /** Regular expression over the last user message. */
  readonly user?: string;
  /** Regular expression over the system prompt. */
  readonly system?: string;
  /** Exact model name. */
  readonly model?: string;
  /** Role of the last message ("user" or "tool"), so a rule can answer a tool result. */
  readonly lastRole?: 'user' | 'tool' | 'assistant' | 'system';
}

export interface ScriptedToolCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

export type RuleResponse =
  | { readonly text: string }
  | { readonly toolCalls: readonly ScriptedToolCall[]; readonly text?: string }
  | { readonly error: { readonly status: number; readonly message?: string; readonly retryAfterSeconds?: number } };

export interface ScenarioRule {
  readonly match?: RuleMatch;
  readonly respond: RuleResponse;
  /** Report usage in the final chunk (default true), whether or not the request asked for it. */
  readonly usage?: boolean;
  /** Answer a request that carries `stream_options` with a 400 naming it, as some local servers do. */
  readonly rejectStreamOptions?: boolean;
  /** Usage rides on the last content chunk, with its finish_reason, instead of a chunk of its own. */
  readonly usageOnContentChunk?: boolean;
  /** Usage with every count 0, as Ollama sent on cache hits for a time. */
  readonly zeroUsage?: boolean;
  /** The `prompt_tokens` to report instead of the counted one (a truncated or under-counted prompt). */
  readonly promptTokens?: number;
  /** Stall this long after the first chunk (streaming) or before answering. */
  readonly holdMs?: number;
  /** Drop the connection after this many characters of reply text. */
  readonly cutAfterChars?: number;
  /** Send a chunk that is not JSON after this many characters. */
  readonly malformedAfterChars?: number;
  /** How many times the rule fires; absent = always. */
  readonly times?: number;
  /** Characters per streamed chunk (default 6) and the pause between chunks (default 10 ms). */
  readonly chunkChars?: number;
  readonly chunkDelayMs?: number;
}

export interface Scenario {
  readonly name?: string;
  /** Model ids listed by GET /models (the first is the default). */
  readonly models?: readonly string[];
  readonly rules: readonly ScenarioRule[];
}

/** A scenario file that does not fit the format; the message names the bad place. */
export class ScenarioError extends KindError<'invalid-scenario'> {
  override readonly name = 'ScenarioError';
  constructor(message: string) {
    super('invalid-scenario', message);
  }
}

/** Validates untrusted JSON into a Scenario; the message names the bad place. */
export function parseScenario(json: unknown, source = 'scenario'): Scenario {
  if (!isRecord(json)) throw new ScenarioError(`${source}: expected an object with "rules"`);
  const rules = json.rules;
  if (!Array.isArray(rules) || rules.length === 0) throw new ScenarioError(`${source}: "rules" must be a non-empty list`);
  const models = json.models;
  if (models !== undefined && !(Array.isArray(models) && models.every((m) => typeof m === 'string'))) {
    throw new ScenarioError(`${source}: "models" must be a list of strings`);
  }
  rules.forEach((rule, i) => checkRule(rule, `${source}: rules[${i}]`));
  return json as unknown as Scenario;
}

function checkRule(rule: unknown, where: string): void {
  if (!isRecord(rule)) throw new ScenarioError(`${where} must be an object`);
  const match = rule.match;
  if (match !== undefined) {
    if (!isRecord(match)) throw new ScenarioError(`${where}.match must be an object`);
    for (const key of ['user', 'system'] as const) {
      const pattern = match[key];
      if (pattern === undefined) continue;
      if (typeof pattern !== 'string') throw new ScenarioError(`${where}.match.${key} must be a string`);
      try {
        new RegExp(pattern, 'i');
      } catch {
        throw new ScenarioError(`${where}.match.${key} is not a valid regular expression`);
      }
    }
  }
  const respond = rule.respond;
  if (!isRecord(respond)) throw new ScenarioError(`${where}.respond must be an object`);
  const kinds = ['text', 'toolCalls', 'error'].filter((k) => k in respond);
  if (kinds.length === 0) throw new ScenarioError(`${where}.respond needs "text", "toolCalls" or "error"`);
  if ('error' in respond) {
    const error = respond.error;
    if (!isRecord(error) || typeof error.status !== 'number') throw new ScenarioError(`${where}.respond.error.status must be a number`);
  }
  if ('toolCalls' in respond) {
    const calls = respond.toolCalls;
    if (!Array.isArray(calls) || !calls.every((c) => isRecord(c) && typeof c.name === 'string')) {
      throw new ScenarioError(`${where}.respond.toolCalls must be a list of {name, arguments}`);
    }
  }
  for (const key of ['holdMs', 'cutAfterChars', 'malformedAfterChars', 'times', 'chunkChars', 'chunkDelayMs', 'promptTokens']) {
    const value = rule[key];
    if (value !== undefined && (typeof value !== 'number' || value < 0)) throw new ScenarioError(`${where}.${key} must be a number >= 0`);
  }
  for (const key of ['usage', 'rejectStreamOptions', 'usageOnContentChunk', 'zeroUsage']) {
    if (rule[key] !== undefined && typeof rule[key] !== 'boolean') throw new ScenarioError(`${where}.${key} must be true or false`);
  }
}
