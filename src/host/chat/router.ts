import { isHandoffBranchName } from '../../core/git';
import type { Logger } from '../../core/log';
import { parseWebviewMessage, type WebviewMessage } from '../../protocol/chat';

export type WebviewMessageType = WebviewMessage['type'];
export type MessageOf<T extends WebviewMessageType> = Extract<WebviewMessage, { type: T }>;

/**
 * The feature that owns each message the chat view sends. Complete by
 * construction: a message added to the protocol does not compile until it
 * has an owner here, and the owner's handlers do not compile until they
 * handle it.
 */
export const MESSAGE_OWNERS = {
  ready: 'chat view',
  runCommand: 'chat view',
  send: 'chat',
  stop: 'chat',
  retry: 'chat',
  loadOlder: 'chat',
  find: 'chat',
  dismissRant: 'evolution',
  takeBranch: 'evolution',
  showDiff: 'evolution',
  openPullRequest: 'evolution',
  feedback: 'prompt evolution',
  approval: 'approvals',
  proposal: 'proposals',
} as const satisfies { readonly [T in WebviewMessageType]: string };

export type MessageOwner = (typeof MESSAGE_OWNERS)[WebviewMessageType];

/** The handlers of the messages one feature owns: each of them, and no other. */
export type MessageHandlers<O extends MessageOwner> = {
  readonly [T in WebviewMessageType as (typeof MESSAGE_OWNERS)[T] extends O ? T : never]: (message: MessageOf<T>) => void | Promise<void>;
};

export type RouteResult =
  | { readonly outcome: 'handled'; readonly type: WebviewMessageType; readonly owner: string }
  | { readonly outcome: 'malformed' }
  | { readonly outcome: 'unowned'; readonly type: WebviewMessageType }
  | { readonly outcome: 'failed'; readonly type: WebviewMessageType; readonly owner: string };

interface Route {
  readonly owner: string;
  readonly handle: (message: WebviewMessage) => void | Promise<void>;
}

/**
 * Messages from the chat view go to the feature that owns them
 * (docs/architecture.md, "One message, end to end"): each feature registers
 * the handlers of the messages MESSAGE_OWNERS gives it, once.
 * The view's input is untrusted: what does not parse is logged and dropped.
 * A handler that throws is logged; the view goes on.
 */
export class MessageRouter {
  private readonly routes = new Map<WebviewMessageType, Route>();

  constructor(
    private readonly log: Logger,
    /** A short, safe rendering of what was received, for the log. */
    private readonly preview: (raw: unknown) => string,
  ) {}

  register<O extends MessageOwner>(owner: O, handlers: MessageHandlers<O>): void {
    for (const [type, handle] of Object.entries(handlers) as Array<[WebviewMessageType, Route['handle']]>) {
      if (MESSAGE_OWNERS[type] !== owner) throw new Error(`'${type}' messages belong to ${MESSAGE_OWNERS[type]}, not ${owner}`);
      if (this.routes.has(type)) throw new Error(`${owner} registered its handlers twice`);
      this.routes.set(type, { owner, handle });
    }
  }

  async route(raw: unknown): Promise<RouteResult> {
    const message = parseWebviewMessage(raw, { isBranchName: isHandoffBranchName });
    if (!message) {
      this.log.warn(`ignored a malformed message from the chat view: ${this.preview(raw)}`);
      return { outcome: 'malformed' };
    }
    const route = this.routes.get(message.type);
    if (!route) {
      this.log.warn(`no feature handles '${message.type}' messages from the chat view`);
      return { outcome: 'unowned', type: message.type };
    }
    this.log.trace(`view: ${message.type} → ${route.owner}`);
    try {
      await route.handle(message);
      return { outcome: 'handled', type: message.type, owner: route.owner };
    } catch (err) {
      this.log.error(`${route.owner}, '${message.type}' message: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      return { outcome: 'failed', type: message.type, owner: route.owner };
    }
  }
}
