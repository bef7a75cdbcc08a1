import type { ToolsInfo } from '../../protocol/chat';
import { Disposable } from '../platform/lifecycle';
import type { ChatView } from './chatView';

/** What the header needs of the chat view. */
type HeaderView = Pick<ChatView, 'onDidBecomeReady' | 'post'>;

/**
 * The chat header's lines about tools beyond the built-in ones; each feature
 * sets its own, and the view gets them on every (re)start until the header
 * is disposed.
 */
export class ToolsHeader extends Disposable {
  private info: ToolsInfo = { commands: null, mcp: null };

  constructor(private readonly view: HeaderView) {
    super();
    this.register(view.onDidBecomeReady(() => this.post()));
  }

  set(part: Partial<ToolsInfo>): void {
    const next = { ...this.info, ...part };
    if (next.commands === this.info.commands && next.mcp === this.info.mcp) return;
    this.info = next;
    this.post();
  }

  private post(): void {
    this.view.post({ type: 'tools', tools: this.info });
  }
}
