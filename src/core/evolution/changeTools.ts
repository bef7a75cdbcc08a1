import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { ToolHost } from '../chat/tools';
import { toolSpec } from '../messages';
import { toolHost, type Tool } from '../tools/toolHost';
import { redact } from '../redact';
import { boundText } from '../workspace/bounded';
import { listFiles } from '../workspace/listFiles';
import { readFile } from '../workspace/readFile';
import { searchText } from '../workspace/searchText';
import { applyUnifiedDiff } from './applyPatch';
import { checkRelative, confineForWrite } from './confineWrite';
import { describeGate, type GateResult } from './testGate';
import { writeRegularText } from './regularFile';

export interface ChangeToolsOptions {
  /** The scratch clone: the only folder these tools see. */
  readonly root: string;
  /**
   * What run_tests runs: the build and tests through the run's one runner
   * (GateRunner.runTests), so the model's own tests get the gate's sandbox,
   * limits, environment and bounded output.
   */
  readonly runTests: (signal: AbortSignal) => Promise<GateResult>;
  /** Per command, for the verdict's words. */
  readonly timeoutMs: number;
  readonly secrets?: readonly string[];
  /** Largest file write_file accepts. Default 1 MiB. */
  readonly maxWriteBytes?: number;
}

const MAX_RESULT_BYTES = 32 * 1024;

/**
 * The model's tools during the change phase, confined to the scratch clone:
 * paths are relative; `..`, absolute paths, `.git` and symlinks leading out
 * are refused. Errors come back as the tool's text, never as a crash.
 */
export function changeTools(options: ChangeToolsOptions): ToolHost {
  const tools = [...readTools([options.root]), ...writeTools(options), runTestsTool(options)];
  return toolHost(tools, { bound: (text) => boundText(text, MAX_RESULT_BYTES).text });
}

function readTools(roots: readonly string[]): Tool[] {
  return [
    {
      spec: toolSpec('read_file', 'Read a file of the repository (path relative to its root).', { path: { type: 'string' } }, ['path']),
      run: async (args) => (await readFile(roots, checkRelative(args.path))).text,
    },
    {
      spec: toolSpec('list_files', 'List a folder of the repository.', { path: { type: 'string' }, recursive: { type: 'boolean' } }, ['path']),
      run: async (args) => (await listFiles(roots, checkRelative(args.path ?? '.'), { recursive: args.recursive === true, maxEntries: 1000 })).text,
    },
    {
      spec: toolSpec('search_text', 'Find lines containing a plain text (not a regular expression).', { query: { type: 'string' }, path: { type: 'string' } }, ['query']),
      run: async (args) => {
        const dir = args.path === undefined ? undefined : checkRelative(args.path);
        return (await searchText(roots, String(args.query ?? ''), dir === undefined ? {} : { dir })).text;
      },
    },
  ];
}

function writeTools(options: ChangeToolsOptions): Tool[] {
  const maxWriteBytes = options.maxWriteBytes ?? 1024 * 1024;
  return [
    {
      spec: toolSpec('write_file', 'Create or overwrite a file with the full new content.', { path: { type: 'string' }, content: { type: 'string' } }, ['path', 'content']),
      run: async (args) => {
        if (typeof args.content !== 'string') throw new Error('content must be a string');
        if (Buffer.byteLength(args.content) > maxWriteBytes) throw new Error(`content is larger than ${maxWriteBytes} bytes`);
        const target = await confineForWrite(options.root, args.path);
        await fs.mkdir(path.dirname(target.absolute), { recursive: true });
        await writeRegularText(target.absolute, target.display, args.content);
        return `${target.exists ? 'wrote' : 'created'} ${target.display} (${Buffer.byteLength(args.content)} bytes)`;
      },
    },
    {
      spec: toolSpec('apply_patch', 'Apply a unified diff (--- a/file, +++ b/file, @@ hunks); /dev/null creates or deletes a file.', { patch: { type: 'string' } }, ['patch']),
      run: async (args) => (await applyUnifiedDiff(options.root, args.patch)).join('\n'),
    },
  ];
}

function runTestsTool(options: ChangeToolsOptions): Tool {
  return {
    spec: toolSpec('run_tests', "Run the project's build and test commands; returns pass/fail and the output's tail.", {}, []),
    run: async (_args, signal) => {
      const result = await options.runTests(signal);
      // The tail goes to the model provider: redacted like everything else that leaves the run.
      return `${result.passed ? 'PASSED' : 'FAILED'}: ${describeGate(result, options.timeoutMs)}\n${redact(result.tail, options.secrets ?? [])}`;
    },
  };
}
