import type { ServerKind } from './localServers';

/**
 * What a local server is, from what it says of itself
 * (docs/architecture.md, "Local model servers"). Each kind is known by an
 * answer it documents and the others do not give:
 *
 * - llama.cpp: the `Server: llama.cpp` header, `owned_by: "llamacpp"` in its
 *   model list, or `GET /props` with `default_generation_settings`;
 * - vLLM: `owned_by: "vllm"`, or `max_model_len` on its models;
 * - Ollama: `GET /api/version` with a `version`;
 * - LM Studio: `owned_by: "organization_owner"`, or `GET /api/v0/models` listing
 *   models with a `state` (`loaded`, `not-loaded`);
 * - anything else that serves an OpenAI model list: a generic server.
 */

/** A model of an OpenAI model list, with the aliases the server gives it. */
export interface ListedModel {
  readonly id: string;
  readonly aliases: readonly string[];
}

/**
 * `{"object": "list", "data": [{"id": …}]}`, the OpenAI model list every kind
 * serves; undefined for anything else, so a program that is not a model
 * server (a dev server's JSON, code-server) is never taken for one.
 */
export function modelList(body: unknown): ListedModel[] | undefined {
  const list = record(body);
  if (!list || list.object !== 'list' || !Array.isArray(list.data)) return undefined;
  const models: ListedModel[] = [];
  for (const entry of list.data) {
    const model = record(entry);
    if (!model || typeof model.id !== 'string' || model.id === '') return undefined;
    if (models.some((m) => m.id === model.id)) continue;
    const aliases = Array.isArray(model.aliases) ? model.aliases.filter((a): a is string => typeof a === 'string' && a !== '') : [];
    models.push({ id: model.id, aliases });
  }
  return models;
}

/** What a server answered, for `detectKind`; the extra endpoints only when they were asked. */
export interface KindEvidence {
  /** The `Server` header of the model list's answer. */
  readonly serverHeader?: string | null;
  /** `GET /v1/models`. */
  readonly list: unknown;
  /** `GET /api/version` (Ollama). */
  readonly ollamaVersion?: unknown;
  /** `GET /api/v0/models` (LM Studio). */
  readonly lmStudioModels?: unknown;
  /** `GET /props` (llama.cpp). */
  readonly props?: unknown;
}

/** The kind the evidence shows; undefined when nothing in it is particular to one kind. */
export function detectKind(evidence: KindEvidence): ServerKind | undefined {
  const entries = listEntries(evidence.list);
  const owners = new Set(entries.map((e) => e.owned_by));
  if (/llama\.cpp/i.test(evidence.serverHeader ?? '') || owners.has('llamacpp') || record(record(evidence.props)?.default_generation_settings)) return 'llamacpp';
  if (owners.has('vllm') || entries.some((e) => typeof e.max_model_len === 'number')) return 'vllm';
  if (typeof record(evidence.ollamaVersion)?.version === 'string') return 'ollama';
  if (owners.has('organization_owner') || listEntries(evidence.lmStudioModels).some((e) => typeof e.state === 'string')) return 'lmstudio';
  return undefined;
}

function listEntries(body: unknown): Record<string, unknown>[] {
  const data = record(body)?.data;
  return Array.isArray(data) ? data.map(record).filter((r): r is Record<string, unknown> => r !== undefined) : [];
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
