import { isRecord } from '../text';

/**
 * "The request does not fit": each server says it in its own shape, and most
 * of them say it with numbers. Those numbers are a measurement (the server's
 * own count of the prompt, and the window it runs with), so an overflow is
 * parsed, not just shown (docs/architecture.md, "Model port"). One table, one
 * row per known shape, each with an example recorded from that server or
 * from its documentation; the first row that matches wins. (Older releases
 * of vLLM put the error's fields at the top of the body, not under `error`:
 * the SDK keeps no message of such a body, so only its status reaches Candor.)
 */

/** What an overflow error says. */
export interface Overflow {
  /** The table row that matched. */
  readonly parser: string;
  /** The server's count of the prompt; null when its message carries none. */
  readonly real: number | null;
  /** The window the server runs with; null when its message carries none. */
  readonly window: number | null;
  /** Output tokens the server counted into the request as well (vLLM's "in the completion"), when it says so. */
  readonly output?: number;
}

/** A provider's error as the SDK hands it over: the status, the `error` member of the body, its message. */
export interface ProviderError {
  readonly status?: number;
  readonly error: unknown;
  readonly message: string;
}

interface Shape {
  readonly name: string;
  /** A real answer of this shape: the status and body, and where it was recorded. */
  readonly example: { readonly status: number; readonly body: unknown; readonly source: string };
  readonly parse: (error: ProviderError) => Omit<Overflow, 'parser'> | undefined;
}

/** The largest figure taken from an error: a hostile server's 1e300 is no window. */
const MAX_TOKENS = 100_000_000;

function tokens(text: string | undefined): number | null {
  if (text === undefined) return null;
  const n = Number(text.replace(/,/g, ''));
  return Number.isSafeInteger(n) && n > 0 && n <= MAX_TOKENS ? n : null;
}

function field(error: unknown, name: string): unknown {
  return isRecord(error) ? error[name] : undefined;
}

/** `(\d[\d,]*)`: a count, with thousands separators as some servers write them. */
const N = String.raw`(\d[\d,]*)`;

function matcher(pattern: string, read: (m: RegExpExecArray) => Omit<Overflow, 'parser'>): Shape['parse'] {
  const re = new RegExp(pattern, 'i');
  return ({ message }) => {
    const m = re.exec(message);
    return m ? read(m) : undefined;
  };
}

export const OVERFLOW_SHAPES: readonly Shape[] = [
  {
    name: 'llama.cpp',
    example: {
      status: 400,
      source: 'llama.cpp llama-server b9749, -c 2048, a prompt of 2109 tokens',
      body: { error: { code: 400, message: 'request (2109 tokens) exceeds the available context size (2048 tokens), try increasing it', type: 'exceed_context_size_error', n_prompt_tokens: 2109, n_ctx: 2048 } },
    },
    parse: (e) => {
      const byType = field(e.error, 'type') === 'exceed_context_size_error';
      const m = new RegExp(String.raw`request \(${N} tokens\) exceeds the available context size \(${N} tokens\)`, 'i').exec(e.message);
      if (!byType && !m) return undefined;
      const real = field(e.error, 'n_prompt_tokens');
      const window = field(e.error, 'n_ctx');
      return {
        real: tokens(typeof real === 'number' ? String(real) : m?.[1]),
        window: tokens(typeof window === 'number' ? String(window) : m?.[2]),
      };
    },
  },
  {
    // Counts max_tokens in "you requested M": the prompt is "X in the messages".
    name: 'vllm-requested',
    example: {
      status: 400,
      source: 'vLLM (older releases), and DeepSeek\'s API, which words it the same',
      body: { error: { message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4500 in the messages, 500 in the completion). Please reduce the length of the messages or completion.", type: 'BadRequestError', param: null, code: 400 } },
    },
    parse: matcher(String.raw`maximum context length is ${N} tokens\. However, you requested ${N} tokens \(${N} in the messages, ${N} in the completion\)`, (m) => ({
      window: tokens(m[1]), real: tokens(m[3]), ...optionalOutput(m[4]),
    })),
  },
  {
    name: 'vllm-output',
    example: {
      status: 400,
      source: 'vLLM (recent releases)',
      body: { error: { message: "This model's maximum context length is 131072 tokens. However, you requested 1024 output tokens and your prompt contains at least 130049 input tokens, for a total of at least 131073 tokens. Please reduce the length of the input prompt or the number of requested output tokens.", type: 'BadRequestError', param: null, code: 400 } },
    },
    parse: matcher(String.raw`maximum context length is ${N} tokens\. However, you requested ${N} output tokens and your prompt contains at least ${N} input tokens`, (m) => ({
      window: tokens(m[1]), real: tokens(m[3]), ...optionalOutput(m[2]),
    })),
  },
  {
    name: 'vllm-max-tokens',
    example: {
      status: 400,
      source: 'vLLM, max_tokens larger than the room left',
      body: { error: { message: "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778).", type: 'BadRequestError', param: null, code: 400 } },
    },
    parse: matcher(String.raw`is too large: ${N}\. This model's maximum context length is ${N} tokens and your request has ${N} input tokens`, (m) => ({
      window: tokens(m[2]), real: tokens(m[3]), ...optionalOutput(m[1]),
    })),
  },
  {
    name: 'vllm-input',
    example: {
      status: 400,
      source: 'vLLM, a prompt longer than max_model_len',
      body: { error: { message: "This model's maximum context length is 1536 tokens. However, your request has 4176 input tokens. Please reduce the length of the input messages.", type: 'BadRequestError', param: null, code: 400 } },
    },
    parse: matcher(String.raw`maximum context length is ${N} tokens\. However, your request has ${N} input tokens`, (m) => ({ window: tokens(m[1]), real: tokens(m[2]) })),
  },
  {
    name: 'vllm-decoder',
    example: {
      status: 400,
      source: 'vLLM V1 engine input validation',
      body: { error: { message: 'The decoder prompt (length 8825) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens.', type: 'BadRequestError', param: null, code: 400 } },
    },
    parse: matcher(String.raw`prompt \(length ${N}\) is longer than the maximum model length of ${N}`, (m) => ({ real: tokens(m[1]), window: tokens(m[2]) })),
  },
  {
    // The current message carries no numbers; older ones said both.
    name: 'openai',
    example: {
      status: 400,
      source: 'OpenAI API, context_length_exceeded',
      body: { error: { message: 'Your input exceeds the context window of this model. Please adjust your input and try again.', type: 'invalid_request_error', param: 'input', code: 'context_length_exceeded' } },
    },
    parse: (e) => {
      const m = new RegExp(String.raw`maximum context length is ${N} tokens\. However, your messages resulted in ${N} tokens`, 'i').exec(e.message);
      if (m) return { window: tokens(m[1]), real: tokens(m[2]) };
      return field(e.error, 'code') === 'context_length_exceeded' || /exceeds the context window of this model/i.test(e.message) ? { real: null, window: null } : undefined;
    },
  },
  {
    name: 'anthropic',
    example: {
      status: 400,
      source: "Anthropic's OpenAI-compatible endpoint",
      body: { error: { type: 'invalid_request_error', message: 'prompt is too long: 213462 tokens > 200000 maximum' } },
    },
    parse: matcher(String.raw`prompt is too long: ${N} tokens > ${N} maximum`, (m) => ({ real: tokens(m[1]), window: tokens(m[2]) })),
  },
  {
    // "the first N tokens" are the tokens LM Studio keeps, not the prompt's count.
    name: 'lm-studio',
    example: {
      status: 400,
      source: 'LM Studio 0.3, a model loaded with a 4096-token context',
      body: { error: 'Trying to keep the first 5406 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input' },
    },
    parse: matcher(String.raw`model is loaded with context length of only ${N} tokens`, (m) => ({ real: null, window: tokens(m[1]) })),
  },
];

function optionalOutput(text: string | undefined): { output?: number } {
  const n = tokens(text);
  return n === null ? {} : { output: n };
}

/** The overflow a provider's error describes, or undefined when it is some other error. */
export function parseOverflow(error: ProviderError): Overflow | undefined {
  if (error.status !== undefined && (error.status < 400 || error.status >= 500)) return undefined;
  for (const shape of OVERFLOW_SHAPES) {
    const found = shape.parse(error);
    if (found) return { parser: shape.name, ...found };
  }
  return undefined;
}

/** The provider's error as `parseOverflow` reads it, from an error body (`{"error": …}` or the error itself). */
export function providerErrorOf(status: number | undefined, body: unknown, fallback: string): ProviderError {
  const error = isRecord(body) && 'error' in body ? body.error : body;
  const message = typeof error === 'string' ? error : typeof field(error, 'message') === 'string' ? String(field(error, 'message')) : fallback;
  return { ...(status === undefined ? {} : { status }), error, message };
}
