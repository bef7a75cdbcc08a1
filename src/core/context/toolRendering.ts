import { createHash } from 'node:crypto';
import type { ToolSpec } from '../messages';
import type { Identity } from './driftEvents';
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
 * - `llama`: the Llama 3.1+ chat template as llama.cpp, LM Studio and vLLM
 *   apply it (Jinja `tojson(indent=4)`): each definition as JSON indented by
 *   4, after the template's instruction.
 * - `json`: one line of JSON per definition inside the template's tags: the
 *   other local templates (Qwen 2.5, Hermes, Mistral), and every model on
 *   Ollama, whose Go templates print a definition as compact JSON.
 *
 * What a template adds beyond this is the provider's own; the calibration's
 * offset learns it for a model with no known tokenizer.
 */

export type ToolFamily = 'openai' | 'llama' | 'json';

/** One definition: the texts the provider tokenizes, and the tokens of its frame. */
export interface RenderedTool {
  readonly name: string;
  readonly texts: readonly string[];
  readonly overhead: number;
}

/** A tool list rendered once for a family: built when the list changes, never per request. */
export interface ToolRendering {
  readonly family: ToolFamily;
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

const LLAMA_INSTRUCTION =
  'Environment: ipython\nGiven the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\n'
  + 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.\n\n';
const JSON_INSTRUCTION =
  '# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n</tools>\n\n'
  + 'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';

/** A loopback host's slug (127.x, localhost, 0.0.0.0, [::1]): a local server, which applies the model's own template. */
const LOOPBACK_SLUG = /^(127-|localhost(-|$)|0-0-0-0(-|$)|-1-)/;
/** Ollama's port: its templates are its own, whatever the model. */
const OLLAMA_SLUG = /-11434$/;

/**
 * The family of a request's identity, from the provider slug and the model
 * name alone, in this order: an OpenAI model counts by OpenAI's recipe
 * wherever it is served from (a proxy on loopback included); any model on
 * Ollama's port by compact JSON; a Llama model elsewhere by its Jinja
 * template; any other model on a loopback server by the JSON its template
 * inlines; everything else (hosted endpoints, the offline provider) by
 * OpenAI's recipe, the documented one.
 */
export function toolFamilyOf(identity: Identity): ToolFamily {
  if (encodingForModel(identity.model)) return 'openai';
  if (OLLAMA_SLUG.test(identity.provider)) return 'json';
  if (/llama/i.test(identity.model)) return 'llama';
  return LOOPBACK_SLUG.test(identity.provider) ? 'json' : 'openai';
}

/** Renders a tool list; `model` picks the recipe's constants for the `openai` family. */
export function renderTools(family: ToolFamily, specs: readonly ToolSpec[], model = 'gpt-4o'): ToolRendering {
  const funcInit = encodingForModel(model) === 'cl100k_base' ? FUNC_INIT_CL100K : FUNC_INIT_O200K;
  const tools = specs.map((spec): RenderedTool => {
    if (family === 'openai') return openAiTool(spec, funcInit);
    return { name: spec.function.name, texts: [family === 'llama' ? `${JSON.stringify(spec, null, 4)}\n\n` : `${JSON.stringify(spec)}\n`], overhead: 0 };
  });
  const list = specs.length === 0
    ? { texts: [], overhead: 0 }
    : family === 'openai' ? { texts: [], overhead: FUNC_END } : { texts: [family === 'llama' ? LLAMA_INSTRUCTION : JSON_INSTRUCTION], overhead: 0 };
  const hash = createHash('sha1').update(`${family}:${funcInit}`);
  for (const tool of tools) hash.update(`\0${tool.overhead}\0${tool.texts.join('\0')}`);
  return { family, key: specs.length === 0 ? '' : hash.digest('base64').slice(0, 16), tools, list };
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
