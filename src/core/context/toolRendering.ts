import { createHash } from 'node:crypto';
import type { ToolSpec } from '../messages';
import type { Identity } from '../modelIdentity';
import { templateJson } from './chatFrames';
import { encodingForModel } from './estimator';

/**
 * Tool definitions as a provider family renders them into the prompt it
 * counts (docs/architecture.md, "Context gate"). The provider never shows the
 * rendering; what it adds is measured once per tool list, as texts to
 * tokenize and the constant tokens of the frame around them, so that each
 * definition has a count of its own and the list's count is their sum.
 *
 * - `openai`: OpenAI's documented counting ("How to count tokens with
 *   tiktoken"): per function `name:description` and per property
 *   `key:type:description`, each enum value, and the constants of the
 *   `# Tools` / `namespace functions` frame. Hosted OpenAI-compatible models
 *   and the embedded offline provider.
 * - `json`: one line of JSON per definition inside the template's tags, as
 *   Jinja's `tojson` writes it (`", "` and `": "` between items): the local
 *   servers that apply a model's Jinja template (llama.cpp, LM Studio, vLLM)
 *   to a model whose family Candor does not ship a template of.
 * - `ollama`: the same, as compact JSON: Ollama's Go templates print a
 *   definition that way.
 *
 * A family Candor ships (Qwen3, Llama 3, DeepSeek V3) is framed by its own
 * template instead (chatFrames.ts). What a template adds beyond this is the
 * provider's own; the calibration's offset learns it for a model with no
 * known tokenizer, and the band says how far off it may be.
 */

export type ToolFamily = 'openai' | 'json' | 'ollama';

/** One definition: the texts the provider tokenizes, and the tokens of its frame. */
export interface RenderedTool {
  readonly name: string;
  readonly texts: readonly string[];
  readonly overhead: number;
}

/** A tool list rendered once for a family: built when the list changes, never per request. */
export interface ToolRendering {
  readonly family: ToolFamily;
  /** The definitions rendered: a counter with a chat template of its own frames them its way (chatFrames.ts). */
  readonly specs: readonly ToolSpec[];
  /** A hash of what was rendered: an anchor's mark keeps it, never the text. */
  readonly key: string;
  readonly tools: readonly RenderedTool[];
  /** What the list adds once, however many definitions it holds. */
  readonly list: { readonly texts: readonly string[]; readonly overhead: number };
}

/** The recipe's constants for the o200k models (gpt-4o, gpt-4o-mini); cl100k models open each function with 10. */
const FUNC_INIT_O200K = 7;
const FUNC_INIT_CL100K = 10;
const PROP_INIT = 3;
const PROP_KEY = 3;
const ENUM_INIT = -3;
const ENUM_ITEM = 3;
const FUNC_END = 12;

const JSON_INSTRUCTION =
  '# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n</tools>\n\n'
  + 'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';

/** A loopback host's slug (127.x, localhost, 0.0.0.0, [::1]): a local server, which applies the model's own template. */
const LOOPBACK_SLUG = /^(127-|localhost(-|$)|0-0-0-0(-|$)|-1-)/;
/** Ollama's port: its templates are its own, whatever the model. */
const OLLAMA_SLUG = /-11434$/;

/**
 * The family of a request's identity, in this order: an OpenAI model counts
 * by OpenAI's recipe wherever it is served from (a proxy on loopback
 * included); any model on Ollama's port by compact JSON; any other model on
 * a loopback server by the JSON its template inlines; everything else
 * (hosted endpoints, the offline provider) by OpenAI's recipe, the
 * documented one. Nothing is read from the rest of the model's name: a
 * model id is often a file path, and a Qwen3 file under a `llama.cpp/`
 * folder is no Llama (the family comes from the server's own metadata,
 * provider/serverFamily.ts).
 */
export function toolFamilyOf(identity: Identity): ToolFamily {
  if (encodingForModel(identity.model)) return 'openai';
  if (OLLAMA_SLUG.test(identity.provider)) return 'ollama';
  return LOOPBACK_SLUG.test(identity.provider) ? 'json' : 'openai';
}

/** Renders a tool list; `model` picks the recipe's constants for the `openai` family. */
export function renderTools(family: ToolFamily, specs: readonly ToolSpec[], model = 'gpt-4o'): ToolRendering {
  const funcInit = encodingForModel(model) === 'cl100k_base' ? FUNC_INIT_CL100K : FUNC_INIT_O200K;
  const tools = specs.map((spec): RenderedTool => {
    if (family === 'openai') return openAiTool(spec, funcInit);
    return { name: spec.function.name, texts: [`${family === 'ollama' ? JSON.stringify(spec) : templateJson(spec)}\n`], overhead: 0 };
  });
  const list = specs.length === 0 ? { texts: [], overhead: 0 } : family === 'openai' ? { texts: [], overhead: FUNC_END } : { texts: [JSON_INSTRUCTION], overhead: 0 };
  const hash = createHash('sha1').update(`${family}:${funcInit}`);
  for (const tool of tools) hash.update(`\0${tool.overhead}\0${tool.texts.join('\0')}`);
  return { family, specs, key: specs.length === 0 ? '' : hash.digest('base64').slice(0, 16), tools, list };
}

/** The cookbook's per-function count: trailing full stops of descriptions dropped, as the recipe does. */
function openAiTool(spec: ToolSpec, funcInit: number): RenderedTool {
  const fn = spec.function;
  const texts = [`${fn.name}:${withoutFullStop(fn.description)}`];
  let overhead = funcInit;
  const properties = recordOf(fn.parameters?.properties);
  const keys = Object.keys(properties);
  if (keys.length > 0) overhead += PROP_INIT;
  for (const key of keys) {
    const property = recordOf(properties[key]);
    overhead += PROP_KEY;
    if (Array.isArray(property.enum)) {
      overhead += ENUM_INIT;
      for (const item of property.enum as unknown[]) {
        overhead += ENUM_ITEM;
        texts.push(String(item));
      }
    }
    texts.push(`${key}:${typeName(property.type)}:${withoutFullStop(property.description)}`);
  }
  return { name: fn.name, texts, overhead };
}

function withoutFullStop(text: unknown): string {
  const value = typeof text === 'string' ? text : '';
  return value.endsWith('.') ? value.slice(0, -1) : value;
}

function typeName(type: unknown): string {
  if (typeof type === 'string') return type;
  return Array.isArray(type) ? type.map(String).join(' | ') : 'any';
}

function recordOf(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * The rendering of the tool list in use, kept while the list and the family
 * stay the same: the host hands out the same definition objects per request,
 * so comparing them one by one finds an unchanged list without reading it.
 */
export class ToolRenderings {
  private last: { style: string; specs: readonly ToolSpec[]; rendering: ToolRendering } | undefined;

  of(identity: Identity, specs: readonly ToolSpec[]): ToolRendering {
    const family = toolFamilyOf(identity);
    const style = family === 'openai' ? `${family}:${encodingForModel(identity.model) ?? ''}` : family;
    const last = this.last;
    if (last && last.style === style && sameList(last.specs, specs)) return last.rendering;
    const rendering = renderTools(family, specs, identity.model);
    this.last = { style, specs: [...specs], rendering };
    return rendering;
  }
}

function sameList(a: readonly ToolSpec[], b: readonly ToolSpec[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
