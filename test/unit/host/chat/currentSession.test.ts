import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { CURRENT_SESSION_KEY, takeCurrentSession, type StateStore } from '../../../../src/host/chat/currentSession';

/** A Memento as VS Code keeps it: values by key, an update seen by the next read. */
class MapStore implements StateStore {
  readonly values = new Map<string, unknown>();
  constructor(initial?: unknown) {
    if (initial !== undefined) this.values.set(CURRENT_SESSION_KEY, initial);
  }
  get(key: string): unknown {
    return this.values.get(key);
  }
  async update(key: string, value: unknown): Promise<void> {
    if (value === undefined) this.values.delete(key);
    else this.values.set(key, value);
  }
}

const SESSIONS = path.resolve('/data/candor/sessions');
const file = (id: string): string => path.join(SESSIONS, `${id}.jsonl`);

describe('the current session is kept per workspace', () => {
  it('a workspace reopens its own session, whatever the window-wide value says', () => {
    const global = new MapStore(file('old'));
    assert.deepEqual(takeCurrentSession(new MapStore(file('mine')), global, SESSIONS), { file: file('mine'), migrated: false });
    assert.equal(global.get(CURRENT_SESSION_KEY), file('old'), 'a workspace that has its own leaves the old value alone');
  });

  it('the session an older version had open is taken over once: the first window keeps it, the next starts fresh', () => {
    const global = new MapStore(file('open-before-the-update'));
    const first = new MapStore();
    const second = new MapStore();
    assert.deepEqual(takeCurrentSession(first, global, SESSIONS), { file: file('open-before-the-update'), migrated: true });
    assert.equal(first.get(CURRENT_SESSION_KEY), file('open-before-the-update'), 'stored for this workspace');
    assert.equal(global.get(CURRENT_SESSION_KEY), undefined, 'and cleared for every other window');
    assert.deepEqual(takeCurrentSession(second, global, SESSIONS), { file: undefined, migrated: false }, 'so two windows never append to one file');
    assert.deepEqual(takeCurrentSession(first, global, SESSIONS), { file: file('open-before-the-update'), migrated: false }, 'the first keeps it after a reload');
  });

  for (const [what, value] of [
    ['nothing', undefined],
    ['not a string', 42],
    ['a relative path', 'sessions/a.jsonl'],
    ['a file beside the sessions folder', path.join(SESSIONS, '..', 'drift.jsonl')],
    ['a folder whose name starts the same', `${SESSIONS}2${path.sep}a.jsonl`],
    ['a file below a subfolder', path.join(SESSIONS, 'sub', 'a.jsonl')],
    ['not a session file', path.join(SESSIONS, 'a.txt')],
  ] as const) {
    it(`${what}, in either store, is not reopened`, () => {
      const global = new MapStore(value);
      assert.deepEqual(takeCurrentSession(new MapStore(value), global, SESSIONS), { file: undefined, migrated: false });
      assert.equal(global.get(CURRENT_SESSION_KEY), value, 'nothing is migrated');
    });
  }
});
