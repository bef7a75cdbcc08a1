import * as assert from 'node:assert/strict';
import type { HostMessage } from '../../../../src/protocol/chat';
import { ToolsHeader } from '../../../../src/host/chat/toolsHeader';
import { EventSource } from '../../../helpers/eventSource';

/** The chat view as the header sees it: it says it is ready, and takes what is posted. */
class ViewStandIn {
  readonly ready = new EventSource<void>();
  readonly onDidBecomeReady = this.ready.event;
  readonly posted: HostMessage[] = [];
  post(message: HostMessage): void {
    this.posted.push(message);
  }
}

describe("the chat header's tool lines", () => {
  it('a view that (re)starts gets the lines; once the header is disposed it no longer listens', () => {
    const view = new ViewStandIn();
    const header = new ToolsHeader(view);
    header.set({ mcp: 'MCP: 2 servers, 14 tools' });
    view.posted.length = 0;
    view.ready.fire();
    assert.deepEqual(view.posted, [{ type: 'tools', tools: { commands: null, mcp: 'MCP: 2 servers, 14 tools' } }]);
    header.dispose();
    assert.equal(view.ready.listenerCount, 0, 'the header left no listener on the view');
    view.ready.fire();
    assert.equal(view.posted.length, 1, 'a restart after the header is gone posts nothing from it');
  });
});
