import type { TemplateFamily } from '../modelIdentity';
import type { ServerKind } from './localServers';
import type { ReadOptions } from './serverWindow';

/**
 * What a local server says about the model it runs (docs/architecture.md,
 * "Exact counts"): the family of its tokenizer, read from the server's own
 * metadata and never from the model's name (llama.cpp names a model by its
 * file path, and a Qwen3 file under a `llama.cpp/` folder is no Llama), and
 * whether the server counts a prompt itself.
 *
 * - llama.cpp: `GET /props` `chat_template`, `GET /v1/models`
 *   `data[].meta.n_vocab`; it counts with `/apply-template` + `/tokenize`.
 * - vLLM: it counts with `/tokenize` over chat messages; its model list says
 *   nothing of the family.
 * - Ollama: `POST /api/show` `model_info` (`general.architecture`, the
 *   vocabulary's size) and `details.family`.
 * - LM Studio: `GET /api/v0/models` `data[].arch` (no vocabulary size: an
 *   `llama` architecture may be Llama 2 or 3, and is left unknown).
 */

/** How a server counts a prompt itself, before it is sent. */
export type ServerCounting = 'llamacpp' | 'vllm';

export interface FamilyFacts {
  readonly family?: TemplateFamily;
  readonly counting?: ServerCounting;
}

/** Vocabulary sizes, as the GGUF and the server report them (padded for Qwen). */
const VOCABULARIES: readonly (readonly [number, TemplateFamily])[] = [
  [151_936, 'qwen3'],
  [152_064, 'qwen3'],
  [151_646, 'qwen3'],
  [128_256, 'llama3'],
  [129_280, 'deepseek_v3'],
];

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.map(record).filter((r): r is Record<string, unknown> => r !== undefined) : [];
}

function byVocabulary(size: unknown): TemplateFamily | undefined {
  return VOCABULARIES.find(([n]) => n === size)?.[1];
}

/**
 * The family a chat template writes: the markers of each family's template.
 * A template is text the server sends: only its markers are read, nothing of
 * it is run here.
 */
export function familyOfTemplate(template: unknown): TemplateFamily | undefined {
  if (typeof template !== 'string') return undefined;
  if (template.includes('<|im_start|>') && template.includes('<tool_call>')) return 'qwen3';
  if (template.includes('<|start_header_id|>') && template.includes('<|eot_id|>')) return 'llama3';
  if (template.includes('<｜User｜>') && template.includes('<｜Assistant｜>')) return 'deepseek_v3';
  return undefined;
}

/**
 * llama.cpp: the template's family, confirmed by the vocabulary's size when
 * the model list gives it (a fine-tune may bring its own template: the
 * vocabulary decides between them).
 */
export function llamaCppFamily(props: unknown, models: unknown): TemplateFamily | undefined {
  const byTemplate = familyOfTemplate(record(props)?.chat_template);
  const sizes = list(record(models)?.data).map((m) => record(m.meta)?.n_vocab);
  const byVocab = sizes.map(byVocabulary).find((f) => f !== undefined);
  if (sizes.length === 0 || sizes.every((s) => s === undefined)) return byTemplate;
  return byTemplate === byVocab ? byTemplate : undefined;
}

/** Ollama: `/api/show`'s architecture and vocabulary size (`<arch>.vocab_size`, else the token list's length is not sent). */
export function ollamaFamily(show: unknown): TemplateFamily | undefined {
  const info = record(record(show)?.model_info);
  const arch = typeof info?.['general.architecture'] === 'string' ? info['general.architecture'] : record(record(show)?.details)?.family;
  if (typeof arch !== 'string') return undefined;
  const vocab = byVocabulary(info?.[`${arch}.vocab_size`]);
  if (vocab) return vocab;
  if (/^qwen[23]/.test(arch)) return 'qwen3';
  return undefined;
}

/** LM Studio: the `arch` of the model in its list. */
export function lmStudioFamily(models: unknown, model: string): TemplateFamily | undefined {
  const arch = list(record(models)?.data).find((m) => m.id === model)?.arch;
  if (typeof arch !== 'string') return undefined;
  if (/^qwen[23]/.test(arch)) return 'qwen3';
  if (/^deepseek_?v3$/.test(arch)) return 'deepseek_v3';
  return undefined;
}

/** What one request brought back: `answered` once any HTTP response came; `body`, its JSON when the status was 2xx. */
interface Answer {
  readonly answered: boolean;
  readonly body: unknown;
}

async function askJson(url: string, init: { readonly method: 'GET' } | { readonly method: 'POST'; readonly body: unknown }, options: ReadOptions): Promise<Answer> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: init.method,
      signal: options.signal,
      headers: { ...(init.method === 'POST' ? { 'content-type': 'application/json' } : {}), accept: 'application/json', ...options.headers },
      ...(init.method === 'POST' ? { body: JSON.stringify(init.body) } : {}),
      redirect: 'error',
    });
  } catch {
    return { answered: false, body: undefined };
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return { answered: true, body: undefined };
  }
  return { answered: true, body: await response.json().catch(() => undefined) };
}

/** The JSON a POST answers with; undefined for a failure, a non-2xx status or a body that is not JSON. */
export async function postJson(url: string, body: unknown, options: ReadOptions): Promise<unknown> {
  return (await askJson(url, { method: 'POST', body }, options)).body;
}

/**
 * What the server at `origin` says about `model`. `answered`: the server
 * answered each question (if only with an error status), so what it
 * did not say it will not say next time either; false when nothing came back.
 */
export interface FamilyReading {
  readonly facts: FamilyFacts;
  readonly answered: boolean;
}

export async function readFamilyFacts(kind: ServerKind, origin: string, model: string, options: ReadOptions): Promise<FamilyReading> {
  const get = (pathname: string): Promise<Answer> => askJson(`${origin}${pathname}`, { method: 'GET' }, options);
  switch (kind) {
    case 'llamacpp': {
      const [props, models] = await Promise.all([get('/props'), get('/v1/models')]);
      const family = llamaCppFamily(props.body, models.body);
      return { facts: { ...(family ? { family } : {}), ...(props.body !== undefined ? { counting: 'llamacpp' as const } : {}) }, answered: props.answered && models.answered };
    }
    case 'vllm':
      return { facts: { counting: 'vllm' }, answered: true };
    case 'ollama': {
      const show = await askJson(`${origin}/api/show`, { method: 'POST', body: { model } }, options);
      const family = ollamaFamily(show.body);
      return { facts: family ? { family } : {}, answered: show.answered };
    }
    case 'lmstudio': {
      const list = await get('/api/v0/models');
      const family = lmStudioFamily(list.body, model);
      return { facts: family ? { family } : {}, answered: list.answered };
    }
    default:
      return { facts: {}, answered: true };
  }
}

