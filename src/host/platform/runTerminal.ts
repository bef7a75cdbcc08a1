import { setMaxListeners } from 'node:events';
import * as vscode from 'vscode';

export interface RunOutput {
  line(text?: string): void;
  /** A line rewritten in place (A/B progress). */
  status(text: string): void;
}

/** The task's terminal: prints the run, redacted, and closing it aborts the run. */
export class RunTerminal implements vscode.Pseudoterminal {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  private readonly closeEmitter = new vscode.EventEmitter<number>();
  readonly onDidWrite = this.writeEmitter.event;
  readonly onDidClose = this.closeEmitter.event;
  private readonly abort = new AbortController();
  private statusOpen = false;

  constructor(
    private readonly body: (out: RunOutput, signal: AbortSignal) => Promise<number>,
    private readonly redact: (text: string) => string,
  ) {
    // Every request of the run listens on this one signal, and the SDK keeps its listener until the run ends.
    setMaxListeners(0, this.abort.signal);
  }

  open(): void {
    const out: RunOutput = {
      line: (text = '') => {
        this.endStatus();
        this.writeEmitter.fire(`${this.redact(text).replace(/\r?\n/g, '\r\n')}\r\n`);
      },
      status: (text) => {
        this.writeEmitter.fire(`\r\x1b[2K${this.redact(text)}`);
        this.statusOpen = true;
      },
    };
    void this.body(out, this.abort.signal).then(
      (code) => this.done(code),
      (err: unknown) => {
        out.line(`Error: ${errorText(err)}`);
        this.done(1);
      },
    );
  }

  close(): void {
    this.abort.abort();
  }

  handleInput(data: string): void {
    if (data === '\x03') {
      this.writeEmitter.fire('^C\r\n');
      this.abort.abort();
    }
  }

  private endStatus(): void {
    if (!this.statusOpen) return;
    this.statusOpen = false;
    this.writeEmitter.fire('\r\n');
  }

  private done(code: number): void {
    this.endStatus();
    this.closeEmitter.fire(code);
    this.writeEmitter.dispose();
    this.closeEmitter.dispose();
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
