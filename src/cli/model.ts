import * as fs from 'node:fs';
import { heuristicTokens } from '../core/context/heuristic';
import { demoScenario } from '../core/offline/demoScenario';
import { parseScenario, type Scenario } from '../core/offline/scenario';
import { DEFAULT_POLICY, type ChatModel } from '../core/provider/chatModel';
import { ModelResolver } from '../core/provider/resolve';
import { errorMessage } from '../core/errorMessage';
import { KindError } from '../core/kindError';

/** A command line that cannot run as given: exit 2 and print the usage. */
/** The command line is wrong: the CLI prints the message and its usage, and exits 2. */
export class UsageError extends KindError<'usage'> {
  override readonly name = 'UsageError';
  constructor(message: string) {
    super('usage', message);
  }
}

/** `--base-url URL --model M`, or neither for the offline demo (from `--scenario FILE` when given). */
export interface ModelFlags {
  readonly baseUrl?: string;
  readonly model?: string;
  readonly scenario?: string;
}

export interface CliModel {
  readonly model: ChatModel;
  /** For the offline demo: what answers, to say so before the run. */
  readonly offline?: string;
  /** Stops the offline server, if one was started. */
  close(): Promise<void>;
}

/**
 * The CLI's model, resolved by the same code as the extension's
 * (`ModelResolver`), with the default request policy. The key comes from
 * `OPENAI_API_KEY` and goes only to `--base-url`.
 */
export async function resolveCliModel(flags: ModelFlags, apiKey: string): Promise<CliModel> {
  const baseUrl = flags.baseUrl?.trim() ?? '';
  if (baseUrl !== '' && !flags.model) throw new UsageError('--model is required with --base-url');
  const scenario = baseUrl === '' ? loadScenario(flags.scenario) : demoScenario;
  const resolver = new ModelResolver({ scenario: () => scenario, countTokens: heuristicTokens });
  const model = await resolver.resolve({ baseUrl, apiKey, model: flags.model ?? (baseUrl === '' ? scenario.models?.[0] : undefined) ?? '', policy: DEFAULT_POLICY });
  return {
    model,
    ...(baseUrl === '' ? { offline: `offline demo — scripted replies, not a model (${flags.scenario ?? 'built-in demo scenario'})` } : {}),
    close: () => resolver.close(),
  };
}

function loadScenario(file: string | undefined): Scenario {
  if (file === undefined) return demoScenario;
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`cannot read the scenario ${file}: ${errorMessage(err)}`);
  }
  return parseScenario(json, file);
}
