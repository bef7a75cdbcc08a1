import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startOfflineServer, type OfflineServer } from '../../../../src/core/offline/server';
import { parseScenario, type Scenario } from '../../../../src/core/offline/scenario';
import type { TextModel } from '../../../../src/core/provider/chatModel';
import { modelAt } from '../provider/models';
import { mulberry32 } from '../../../../src/core/random';
import { uniform } from '../../../helpers/core';

/** A real OpenAI-compatible server on loopback whose scenario a test can swap at any time. */
export interface ModelServer {
  readonly server: OfflineServer;
  readonly model: TextModel;
  use(json: unknown): void;
  /** Picks the scenario per request (e.g. a random hold). */
  usePerRequest(next: () => Scenario): void;
  close(): Promise<void>;
}

export async function startModelServer(): Promise<ModelServer> {
  let pick: () => Scenario = () => parseScenario({ rules: [{ respond: { text: 'summary' } }] });
  const server = await startOfflineServer({ scenario: () => pick(), countTokens: (t) => Math.ceil(t.length / 4) });
  return {
    server,
    model: modelAt(server.baseUrl, { apiKey: 'test-key' }),
    use(json) {
      const scenario = parseScenario(json);
      pick = () => scenario;
      server.resetCounts();
    },
    usePerRequest(next) {
      pick = next;
    },
    close: () => server.close(),
  };
}

export function tempFolder(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'candor-memory-'));
}

export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5000, pollMs = 2): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(pollMs);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Files a condense may leave behind beside the memory file. */
export function tempLeftovers(dir: string): string[] {
  return fs.readdirSync(dir).filter((name) => name.includes('.condense-'));
}

/** A memory file large enough that a short summary is smaller. */
export function seedNotes(lines = 40): Buffer {
  const out: string[] = ['# Memory', ''];
  for (let i = 0; i < lines; i++) out.push(`## 2026-11-30T10:${String(i % 60).padStart(2, '0')}:00Z`, `note ${i}: the build runs with npm test; 注意 ${i}`, '');
  return Buffer.from(out.join('\n'), 'utf8');
}

/** The seeded generator of src/core/random.ts as floats in [0, 1), so a failing run can be replayed from its seed. */
export const prng = (seed: number): (() => number) => uniform(mulberry32(seed));
