import * as vscode from 'vscode';
import { LineRedactor, type SecretSet } from '../../core/redact';
import { TerminalRows } from '../../core/terminalRows';
import { visibleText } from '../../shared/visibleText';
import { Disposable } from '../platform/lifecycle';

/** Most output the terminal holds back while it is not open yet. */
const HELD_CHARS = 1_000_000;

/**
 * "Candor: Commands", the pseudoterminal every command's full output goes to
 * (redacted line by line, so a key split across chunks is still caught),
 * each command's line first; the output's control characters shown as
 * marks, its rows prefixed and broken at the terminal's width
 * (`TerminalRows`, docs/architecture.md, "Text bound for a person"). And Run
 * in Terminal, which types a line into a terminal of the user's, never
 * pressing Enter.
 */
export class CommandTerminals extends Disposable {
  private terminal: vscode.Terminal | undefined;
  private readonly write = this.register(new vscode.EventEmitter<string>());
  private held = '';
  private open = false;
  private readonly lines: LineRedactor;
  /** The terminal's width, from `open` and `setDimensions`; undefined until VS Code says. */
  private columns: number | undefined;
  private readonly rows = new TerminalRows(() => this.columns);

  constructor(private readonly secrets: SecretSet) {
    super();
    this.lines = new LineRedactor(secrets);
    this.register({ dispose: () => this.terminal?.dispose() });
    this.register(vscode.window.onDidCloseTerminal((closed) => {
      if (closed === this.terminal) {
        this.terminal = undefined;
        this.open = false;
        this.rows.lostRow();
      }
    }));
  }

  /** The line a command runs, before its output: one line, its controls shown. */
  echoCommand(command: string): void {
    this.show(this.rows.stream(this.lines.flush()) + this.rows.own(`\n$ ${visibleText(this.secrets.redact(command))}\n`));
  }

  /** Output of a command, raw: redacted and laid out here. */
  echo(text: string): void {
    this.show(this.rows.stream(this.lines.push(text)));
  }

  /** The terminal wants CRLF (laid out text holds no CR of its own). */
  private show(text: string): void {
    const out = text.replace(/\n/g, '\r\n');
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
      open: (dimensions) => {
        this.columns = dimensions?.columns;
        this.open = true;
        if (this.held !== '') this.write.fire(this.held);
        this.held = '';
      },
      setDimensions: (dimensions) => {
        this.columns = dimensions.columns;
      },
      close: () => {
        this.open = false;
      },
    };
    this.terminal = vscode.window.createTerminal({ name: 'Candor: Commands', pty });
  }
}
