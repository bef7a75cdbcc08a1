import * as vscode from 'vscode';
import { LineRedactor, type SecretSet } from '../../core/redact';
import { Disposable } from '../platform/lifecycle';

/** Most output the terminal holds back while it is not open yet. */
const HELD_CHARS = 1_000_000;

/**
 * "Candor: Commands", the pseudoterminal every command's full output goes to
 * (redacted line by line, so a key split across chunks is still caught);
 * and Run in Terminal, which types a line into a terminal of the user's,
 * never pressing Enter.
 */
export class CommandTerminals extends Disposable {
  private terminal: vscode.Terminal | undefined;
  private readonly write = this.register(new vscode.EventEmitter<string>());
  private held = '';
  private open = false;
  private readonly lines: LineRedactor;

  constructor(secrets: SecretSet) {
    super();
    this.lines = new LineRedactor(secrets);
    this.register({ dispose: () => this.terminal?.dispose() });
    this.register(vscode.window.onDidCloseTerminal((closed) => {
      if (closed === this.terminal) {
        this.terminal = undefined;
        this.open = false;
      }
    }));
  }

  /** Output of a command (or its header line), raw: redacted here. */
  echo(text: string): void {
    const out = this.lines.push(text).replace(/\r?\n/g, '\r\n');
    if (out === '') return;
    this.ensure();
    if (this.open) this.write.fire(out);
    else this.held = (this.held + out).slice(-HELD_CHARS);
  }

  /** Run in Terminal: the line typed, not run, in a terminal in `cwd`. */
  typeIn(command: string, cwd: string): void {
    const terminal = vscode.window.createTerminal({ name: 'Candor: Run in Terminal', cwd });
    terminal.show();
    terminal.sendText(command, false);
  }

  private ensure(): void {
    if (this.terminal) return;
    const pty: vscode.Pseudoterminal = {
      onDidWrite: this.write.event,
      open: () => {
        this.open = true;
        if (this.held !== '') this.write.fire(this.held);
        this.held = '';
      },
      close: () => {
        this.open = false;
      },
    };
    this.terminal = vscode.window.createTerminal({ name: 'Candor: Commands', pty });
  }
}
