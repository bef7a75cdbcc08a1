import type { ToolsInfo } from '../../protocol/chat';
import type { ChatView } from './chatView';

/** The chat header's lines about tools beyond the built-in ones; each feature sets its own, and the view gets them on every (re)start. */
export class ToolsHeader {
  private info: ToolsInfo = { commands: null, mcp: null };

  constructor(private readonly view: ChatView) {
    view.onDidBecomeReady(() => this.post());
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
