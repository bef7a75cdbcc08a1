/**
 * Two measurements of Candor's MCP client, each side by side in one run.
 *
 *   npx tsx bench/mcp.bench.ts
 *
 * (a) One MCP tool call through Candor's client against the same call made
 * directly with the SDK's own Client and StdioClientTransport. Both talk
 * to their own server-everything over stdio (started from node_modules,
 * the same environment) and call `echo`, interleaved A B, B A, so neither
 * always goes first. The difference of the medians is what
 * Candor's side adds per call: its transport (process group, line splitting,
 * garbage tolerance), the call's own timer and signal, and rendering the
 * result (joining, bounding, redaction). Target: < 5 ms.
 *
 * (b) The estimate cost of 100 tool definitions (toolEstimate.ts): the first
 * request after the list landed, which builds, renders and measures them,
 * and every later request, which should only add up counts already known:
 * its median against the same request with no tools. Target: < 1 ms added
 * per request.
 */
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { connectMcp } from '../src/core/mcp/client';
import { silentLogger } from '../src/core/log';
import { SecretSet } from '../src/core/redact';
import { measureToolEstimate } from './toolEstimate';

const CALLS = 300;
const WARMUP = 20;
const EVERYTHING = path.resolve(__dirname, '../node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const TARGET_MS = 5;
const ESTIMATE_TARGET_MS = 1;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

export async function run(): Promise<void> {
  await echoCall();
  await toolEstimate();
}

async function echoCall(): Promise<void> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  // A realistic secret set: the redaction pass runs over every result.
  const secrets = new SecretSet(['sk-bench-not-a-real-key-0123456789']);
  const candor = await connectMcp({ name: 'everything', type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env }, { log: silentLogger, secrets });
  const sdk = new Client({ name: 'bench', version: '1' }, { capabilities: {} });
  await sdk.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], env, stderr: 'pipe' }));
  const signal = new AbortController().signal;
  try {
    const viaCandor = async (message: string): Promise<string> => (await candor.call('echo', { message }, { signal, timeoutMs: 10_000 })).text;
    const viaSdk = async (message: string): Promise<string> => {
      const result = await sdk.callTool({ name: 'echo', arguments: { message } });
      const first = (result.content as Array<{ type: string; text?: string }>)[0];
      return first?.text ?? '';
    };
    const candorMs: number[] = [];
    const sdkMs: number[] = [];
    for (let i = 0; i < WARMUP + CALLS; i++) {
      const order = i % 2 === 0 ? [viaCandor, viaSdk] : [viaSdk, viaCandor];
      for (const side of order) {
        const message = `call ${i}`;
        const start = performance.now();
        const text = await side(message);
        const elapsed = performance.now() - start;
        if (text !== `Echo: ${message}`) throw new Error(`unexpected echo: ${text}`);
        if (i >= WARMUP) (side === viaCandor ? candorMs : sdkMs).push(elapsed);
      }
    }
    const candorMedian = median(candorMs);
    const sdkMedian = median(sdkMs);
    const extra = candorMedian - sdkMedian;
    console.log(`(a) mcp echo over stdio (server-everything): ${CALLS} calls each, interleaved, after ${WARMUP} warm-up calls`);
    console.log(`  sdk     Client + StdioClientTransport  median ${sdkMedian.toFixed(3)} ms`);
    console.log(`  candor  connectMcp().call()            median ${candorMedian.toFixed(3)} ms`);
    console.log(`  ${extra >= 0 ? '+' : ''}${extra.toFixed(3)} ms median (target < ${TARGET_MS} ms) ${extra < TARGET_MS ? 'ok' : 'OVER TARGET'}`);
  } finally {
    await candor.close();
    await sdk.close();
  }
}

async function toolEstimate(): Promise<void> {
  const r = await measureToolEstimate();
  const ms = (value: number): string => `${value.toFixed(3)} ms`;
  const added = r.cachedMs - r.noToolsMs;
  console.log(`\n(b) estimate cost of ${r.tools} MCP tool definitions (${r.tokens.toLocaleString('en-US')} tokens, o200k, gpt-4o), counted as the chat counts a request`);
  console.log(`    listed once, off the send path: server start, initialize and tools/list in ${ms(r.listedMs)}`);
  console.log(`    first request after the list landed (median of ${r.firsts} fresh hosts and chats; the very first ${ms(r.first.coldMs)}):`);
  console.log(`      specs() ${ms(r.first.specsMs)} + rendering ${ms(r.first.renderMs)} + measure ${ms(r.first.measureMs)} = ${ms(r.first.totalMs)}`);
  console.log(`    every later request, specs() + rendering + measure (median of ${r.requests.toLocaleString('en-US')}, interleaved with the same request with no tools):`);
  console.log(`      100 tools ${ms(r.cachedMs)}   no tools ${ms(r.noToolsMs)}   ratio ${(r.cachedMs / (r.noToolsMs || 1)).toFixed(2)}×`);
  console.log(`      ${added >= 0 ? '+' : ''}${ms(added)} per request (target < ${ESTIMATE_TARGET_MS} ms) ${added < ESTIMATE_TARGET_MS ? 'ok' : 'OVER TARGET'}`);
}

if (require.main === module) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
