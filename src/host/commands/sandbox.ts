import type { Logger } from '../../core/log';
import { detectSandbox, isSandboxUnavailable, type Sandbox } from '../../core/sandbox/sandbox';

/**
 * The sandbox commands run in: evolution's, always required (there is no
 * setting that runs the agent's commands without one). Looked up once, and
 * again when a setting it depends on changes.
 */
export class CommandSandbox {
  private detected: Promise<Sandbox | string> | undefined;

  constructor(
    private readonly sandboxUid: () => number,
    private readonly log: Logger,
  ) {}

  /** The sandbox, or why there is none here (one line). */
  ready(): Promise<Sandbox | string> {
    this.detected ??= detectSandbox('required', { sandboxUid: this.sandboxUid() }).then((found) => {
      if (!isSandboxUnavailable(found)) return found;
      this.log.warn(`commands: ${found.message}`);
      return found.message.replace(/^evolution's commands must run in an OS sandbox, and /, '');
    });
    return this.detected;
  }

  reset(): void {
    this.detected = undefined;
  }
}
