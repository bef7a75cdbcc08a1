import { createGitHub, type GitHubOptions } from '../../../../src/core/github/client';
import type { GitHub } from '../../../../src/core/github/types';
import { FakeGitHub, type FakeGitHubOptions } from '../../../helpers/fakeGitHub';

/** Shaped like a classic GitHub token, so that a pattern for one would catch it too. */
export const TOKEN = 'ghp_Candor0test0token0abcdefghijklmnopqrs';

/** A clock that only moves when the code under test sleeps: no test waits. */
export class FakeTime {
  now: number;
  readonly slept: number[] = [];
  constructor(start = Date.parse('2025-03-01T12:00:00Z')) {
    this.now = start;
  }
  readonly clock = (): Date => new Date(this.now);
  readonly sleep = async (ms: number): Promise<void> => {
    this.slept.push(ms);
    this.now += ms;
  };
}

export interface GitHubFixture {
  fake: FakeGitHub;
  time: FakeTime;
  /** The client under test, pointed at the fake, on the fake time. */
  client(options?: Partial<GitHubOptions>): GitHub;
}

/**
 * A fresh fake GitHub for each test of the suite; after each, the fake says
 * whether a request or an answer broke GitHub's description, and closes.
 */
export function useFakeGitHub(options: Partial<FakeGitHubOptions> = {}): GitHubFixture {
  const fixture = {} as GitHubFixture;
  beforeEach(async () => {
    fixture.fake = await FakeGitHub.start({ token: TOKEN, ...options });
    fixture.time = new FakeTime();
    fixture.client = (extra = {}) => createGitHub({ apiUrl: fixture.fake.apiUrl, token: TOKEN, userAgent: 'candor-test', clock: fixture.time.clock, sleep: fixture.time.sleep, ...extra });
  });
  afterEach(async () => {
    await fixture.fake.close();
    fixture.fake.assertValid();
  });
  return fixture;
}
