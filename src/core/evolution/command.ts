import { spawn } from 'node:child_process';
import type { Invocation } from './sandbox';
import { Tail } from './tail';

export interface CommandOptions {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Every byte of output (stdout and stderr interleaved), as it comes. */
  readonly onOutput?: (chunk: string) => void;
  readonly tailBytes?: number;
}

export interface CommandResult {
  readonly passed: boolean;
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
  /** The shell could not be started at all. */
  readonly crashed: boolean;
  readonly ms: number;
  readonly tail: string;
}

/** After SIGTERM, the group gets this long before SIGKILL. */
const KILL_GRACE_MS = 2000;
/** After the shell exits, stray children holding the output pipes get this long. */
const DRAIN_MS = 500;

/**
 * Runs a command (a shell, or the sandbox around one) in its own process
 * group, so a timeout or a cancel ends everything it started (a test
 * runner's workers, a server it forked), and so do we once it has exited.
 * Inside bubblewrap the command has its own session and PID namespace:
 * ending bwrap ends it (`--die-with-parent`), and the namespace with it.
 */
export function runInvocation(invocation: Invocation, options: CommandOptions): Promise<CommandResult> {
  const started = Date.now();
  const tail = new Tail(options.tailBytes ?? 4096);
  const windows = process.platform === 'win32';
  return new Promise((resolve) => {
    let timedOut = false;
    let cancelled = false;
    let settled = false;
    let exitCode: number | null = null;
    const child = spawn(invocation.file, [...invocation.args], {
      cwd: options.cwd,
      env: options.env,
      detached: !windows,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
    const killGroup = (signal: NodeJS.Signals): void => {
      if (child.pid === undefined) return;
      try {
        if (windows) child.kill(signal);
        else process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    };
    const stop = (): void => {
      killGroup('SIGTERM');
      setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS).unref();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs);
    const onAbort = (): void => {
      cancelled = true;
      stop();
    };
    options.signal?.addEventListener('abort', onAbort);
    if (options.signal?.aborted === true) onAbort();

    const onData = (chunk: Buffer): void => {
      tail.push(chunk);
      options.onOutput?.(chunk.toString('utf8'));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);

    const finish = (crashed: boolean, crashMessage?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (crashMessage !== undefined) tail.push(Buffer.from(`\n${crashMessage}\n`));
      const passed = !crashed && !timedOut && !cancelled && exitCode === 0;
      resolve({ passed, exitCode, timedOut, cancelled, crashed, ms: Date.now() - started, tail: tail.text() });
    };
    child.on('error', (error) => finish(true, `could not start the command: ${error.message}`));
    child.on('exit', (code) => {
      exitCode = code;
      // The shell is gone; whatever it left behind in its group goes too.
      killGroup('SIGKILL');
      setTimeout(() => finish(false), DRAIN_MS);
    });
    child.on('close', () => finish(false));
  });
}
