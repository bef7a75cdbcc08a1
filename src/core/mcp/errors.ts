import { ErrorCode, McpError as ProtocolError } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { errorMessage } from '../errorMessage';
import { KindError, isKindError } from '../kindError';
import type { SecretSet } from '../redact';
import { oneLine } from '../text';

/**
 * What went wrong with an MCP server, as a word the caller can switch on:
 * `start` the server could not be started or did not get through
 * initialize, `crashed` it stopped while Candor used it, `timeout` and
 * `cancelled` a call or a connect that took too long or was given up,
 * `protocol` the server said or sent something Candor cannot use (a
 * JSON-RPC error, a message that does not parse, one too large), `sign-in`
 * it wants OAuth, `http` the HTTP exchange itself failed.
 */
export type McpErrorKind = 'start' | 'crashed' | 'timeout' | 'protocol' | 'sign-in' | 'http' | 'cancelled';

export class McpError extends KindError<McpErrorKind> {
  override readonly name = 'McpError';

  constructor(
    kind: McpErrorKind,
    message: string,
    /** The server's name (as defined), '' when unknown. */
    readonly server = '',
    options?: ErrorOptions,
  ) {
    super(kind, message, options);
  }
}

const SIGN_IN_MESSAGE = 'this server needs sign-in, which Candor does not support yet';

/** The longest piece of a server's own words that goes into a message. */
const DETAIL_CHARS = 300;

/** A server's text (an error message, a response body) fit for a message: redacted, on one line, short. */
export function detail(text: string, secrets: SecretSet): string {
  return oneLine(secrets.redact(text.length > DETAIL_CHARS * 4 ? text.slice(0, DETAIL_CHARS * 4) : text), DETAIL_CHARS);
}

/** The HTTP status of an error from the SDK's HTTP transports, when it carries one. */
export function httpStatus(err: unknown): number | undefined {
  if (err instanceof StreamableHTTPError || err instanceof SseError) return typeof err.code === 'number' && err.code >= 100 ? err.code : undefined;
  // The SSE transport reports a failed POST as a plain Error naming the status.
  const match = err instanceof Error ? /\(HTTP (\d{3})\)/.exec(err.message) : null;
  return match ? Number(match[1]) : undefined;
}

/** The server wants OAuth: a 401, or the SDK's own word for it. */
function needsSignIn(err: unknown): boolean {
  return err instanceof UnauthorizedError || httpStatus(err) === 401;
}

/**
 * An error from the SDK or the network as an McpError, for a server that is
 * still connected (a closed connection is told apart by the caller, which
 * knows why it closed). `doing` names the step for the message ("tools/call
 * echo").
 */
export function fromSdkError(err: unknown, server: string, doing: string, secrets: SecretSet): McpError {
  if (isKindError(err, McpError)) return err;
  if (needsSignIn(err)) return new McpError('sign-in', SIGN_IN_MESSAGE, server, { cause: err });
  const status = httpStatus(err);
  if (status !== undefined) return new McpError('http', `${doing}: the server answered HTTP ${status}: ${detail(errorMessage(err), secrets)}`, server, { cause: err });
  if (err instanceof ProtocolError) {
    if (err.code === ErrorCode.RequestTimeout) return new McpError('timeout', `${doing}: ${detail(err.message, secrets)}`, server, { cause: err });
    return new McpError('protocol', `${doing}: the server answered with error ${err.code}: ${detail(err.message, secrets)}`, server, { cause: err });
  }
  const network = networkFailure(err);
  if (network !== undefined) return new McpError('http', `${doing}: could not reach the server (${detail(network, secrets)})`, server, { cause: err });
  return new McpError('protocol', `${doing}: ${detail(errorMessage(err), secrets)}`, server, { cause: err });
}

/** What fetch says when no HTTP answer came at all ("ECONNREFUSED", "getaddrinfo ENOTFOUND host"), else undefined. */
function networkFailure(err: unknown): string | undefined {
  if (!(err instanceof TypeError) || !/fetch failed|network/i.test(err.message)) return undefined;
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof Error) return (cause as NodeJS.ErrnoException).code ?? cause.message;
  return err.message;
}
