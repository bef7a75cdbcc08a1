import * as assert from 'node:assert/strict';
import type { HostMessage } from '../../../../src/protocol/chat';
import { ViewSlot } from '../../../../src/host/chat/viewSlot';
import { EventSource } from '../../../helpers/eventSource';

/** A webview view as VS Code hands it over: it sends messages, takes posts, and closes. */
class ViewStandIn {
  readonly messages = new EventSource<unknown>();
  readonly closed = new EventSource<void>();
  readonly posted: HostMessage[] = [];
  readonly onDidDispose = this.closed.event;
  readonly webview = {
    onDidReceiveMessage: this.messages.event,
    postMessage: async (message: HostMessage): Promise<boolean> => {
      this.posted.push(message);
      return true;
    },
  };
  show(): void {}

  get listenerCount(): number {
    return this.messages.listenerCount + this.closed.listenerCount;
  }
}

const update = (text: string): HostMessage => ({ type: 'delta', id: 'reply', text });

/** The slot as the chat view drives it: a `ready` message from the view marks it ready; every message is kept. */
function slotWithRouter(): { slot: ViewSlot; routed: unknown[] } {
  const routed: unknown[] = [];
  const slot: ViewSlot = new ViewSlot((raw) => {
    routed.push(raw);
    if ((raw as { type?: unknown }).type === 'ready') slot.markReady();
  });
  return { slot, routed };
}

describe('the chat view shown anew', () => {
  it('after a second resolve, an update reaches the view shown once and the view before not at all, even when it closes late', () => {
    const { slot, routed } = slotWithRouter();
    const before = new ViewStandIn();
    const shown = new ViewStandIn();
    slot.attach(before);
    before.messages.fire({ type: 'ready' });
    slot.post([update('one')]);
    assert.deepEqual(before.posted, [update('one')], 'the first view gets updates while it is the one');
    slot.attach(shown);
    assert.equal(before.listenerCount, 0, 'the view before keeps no listener');
    before.messages.fire({ type: 'ready' });
    assert.deepEqual(routed, [{ type: 'ready' }], 'a late message of the view before reaches nothing');
    shown.messages.fire({ type: 'ready' });
    before.closed.fire();
    slot.post([update('two')]);
    assert.deepEqual(shown.posted, [update('two')], 'the view shown gets the update once, though the view before closed after it was shown');
    assert.deepEqual(before.posted, [update('one')], 'the view before gets nothing more');
  });

  it('a view that closes leaves no listener, and nothing is posted until a new one says ready', () => {
    const { slot } = slotWithRouter();
    const first = new ViewStandIn();
    slot.attach(first);
    first.messages.fire({ type: 'ready' });
    first.closed.fire();
    assert.equal(first.listenerCount, 0, 'a closed view keeps no listener');
    assert.equal(slot.view, undefined);
    const next = new ViewStandIn();
    slot.attach(next);
    slot.post([update('before ready')]);
    next.messages.fire({ type: 'ready' });
    slot.post([update('after ready')]);
    assert.deepEqual(next.posted, [update('after ready')]);
    assert.deepEqual(first.posted, []);
    slot.dispose();
    assert.equal(next.listenerCount, 0, 'disposing the chat view releases the live view');
  });
});
