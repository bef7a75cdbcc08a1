import type * as vscode from 'vscode';
import type { HostMessage } from '../../protocol/chat';
import type { TranscriptPages } from '../../core/session/pages';
import type { Subscription } from '../../core/subscription';

/**
 * The chat view following one session's live transcript: each entry it adds
 * or changes is posted as it comes. Following another session's transcript,
 * or disposing the feed, stops following the one before
 * (docs/architecture.md, "Subscriptions").
 */
export class TranscriptFeed implements vscode.Disposable {
  private following: Subscription | undefined;

  constructor(private readonly post: (message: HostMessage) => void) {}

  /** From now on the view follows `pages` (none: nothing), and no longer the transcript before. */
  follow(pages: TranscriptPages | undefined): void {
    this.following?.dispose();
    this.following = pages?.onEntry((entry) => this.post({ type: 'entry', entry }));
  }

  dispose(): void {
    this.follow(undefined);
  }
}
