import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CommandEnding, CommandPlace } from '../../core/commands/runCommandTool';
import { describeForModel, runInView } from '../../core/commands/sandboxedCommand';
import { viewSideFiles } from '../../core/commands/view/manifest';
import { WorkspaceView } from '../../core/commands/view/workspaceView';
import type { Sandbox } from '../../core/sandbox/sandbox';
import type { Logger } from '../../core/log';
import { workspaceIdFor } from '../../core/workspaceId';
import type { EditProposals } from '../chat/proposeEdit';
import type { WorkspaceGit } from '../git/workspaceGit';
import { editorOverlays } from './overlays';

export interface CommandViewsDeps {
  /** `<data folder>/views`. */
  readonly dataDir: string;
  readonly git: WorkspaceGit;
  readonly proposals: EditProposals;
  readonly log: Logger;
  readonly bindIgnored: () => readonly string[];
}

export interface ViewRun {
  readonly sandbox: Sandbox;
  readonly place: CommandPlace;
  readonly command: string;
  readonly network: boolean;
  readonly environment: readonly string[];
  readonly withhold: readonly string[];
  readonly hidden: readonly string[];
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  readonly onOutput: (text: string) => void;
}

/**
 * One view per workspace folder (docs/architecture.md, "Commands"), kept
 * under the data folder and refreshed before each command with what the
 * editor shows: the disk, the unsaved buffers, the pending proposals.
 */
export class CommandViews {
  private readonly views = new Map<string, { readonly view: WorkspaceView; readonly made: string }>();
  /** Per workspace folder, the command running in its view: the next one waits for it. */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: CommandViewsDeps) {}

  /** One command at a time per folder, so that a view is never rebuilt under a command running in it. */
  run(r: ViewRun): Promise<CommandEnding> {
    const root = r.place.root;
    const next = (this.queues.get(root) ?? Promise.resolve()).then(() => this.runNow(r));
    this.queues.set(root, next.catch(() => undefined));
    return next;
  }

  private async runNow(r: ViewRun): Promise<CommandEnding> {
    const view = await this.viewOf(r.place.root, r.sandbox);
    const overlays = await editorOverlays(r.place.root, this.deps.proposals);
    // One command at a time per view: refreshed, run, then checked for what the command changed.
    const result = await view.use(overlays, { git: true }, (report) => {
      this.deps.log.info(`view of ${path.basename(r.place.root)}: ${report.firstBuild ? 'built' : 'refreshed'} in ${Math.round(report.ms)} ms (${report.copied} copied, ${report.removed} removed, ${report.restored} restored, ${report.overlaid} from the editor)`);
      const mounts = view.mounts();
      return runInView({
      sandbox: r.sandbox,
      view: view.dir,
      workspaceRoot: r.place.root,
      cwd: r.place.cwd,
      command: r.command,
      readOnlyBinds: mounts.readOnly,
      tmpfs: mounts.tmpfs,
      hidden: r.hidden,
      network: r.network,
      environment: r.environment,
      withhold: r.withhold,
      timeoutMs: r.timeoutMs,
      signal: r.signal,
      onOutput: r.onOutput,
      });
    });
    return { forModel: describeForModel(result, r.command, r.timeoutMs), outcome: outcomeLine(result, r.timeoutMs) };
  }

  /**
   * The folder's view as the settings have it now: a view made with other
   * ignored folders bound, or for another gate user, is removed and built
   * anew (its files would keep the old owner, its binds the old names).
   */
  private async viewOf(root: string, sandbox: Sandbox): Promise<WorkspaceView> {
    const bindIgnored = [...new Set(this.deps.bindIgnored())].sort();
    const user = sandbox.user;
    const owner = user !== undefined ? { uid: user.uid, gid: user.gid } : undefined;
    const made = JSON.stringify({ bindIgnored, owner });
    const known = this.views.get(root);
    // Clean Up Data… may have removed it: a new one is built.
    if (known !== undefined && known.made === made && fs.existsSync(known.view.dir)) return known.view;
    const viewDir = path.join(this.deps.dataDir, workspaceIdFor(root));
    if (known !== undefined && known.made !== made) {
      this.deps.log.info(`view of ${path.basename(root)}: the settings it was made with changed, built anew`);
      try {
        // Its manifest and journal too: a manifest left behind would describe files no longer there.
        for (const file of [viewDir, ...viewSideFiles(viewDir)]) await fs.promises.rm(file, { recursive: true, force: true });
      } catch (err) {
        // What is left is refreshed like a view found after a reload.
        this.deps.log.warn(`view of ${path.basename(root)}: could not remove the old view: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    const view = new WorkspaceView({
      root,
      viewDir,
      git: await this.deps.git.repository(root),
      bindIgnored,
      hidden: [this.deps.dataDir],
      ...(owner !== undefined ? { owner } : {}),
    });
    this.views.set(root, { view, made });
    return view;
  }
}

function outcomeLine(result: Awaited<ReturnType<typeof runInView>>, timeoutMs: number): string {
  const seconds = `${(result.ms / 1000).toFixed(1)} s`;
  if (result.cancelled) return `stopped after ${seconds}`;
  if (result.timedOut) return `timed out after ${Math.round(timeoutMs / 1000)} s`;
  if (result.crashed) return 'the sandbox could not start it';
  if (result.limitHit !== undefined) return `${result.limitHit} after ${seconds}`;
  return `exit ${result.exitCode ?? 'by signal'} in ${seconds}${result.explanation !== undefined ? ` — ${result.explanation}` : ''}`;
}
