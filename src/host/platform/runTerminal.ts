import { setMaxListeners } from 'node:events';
import * as vscode from 'vscode';
import { errorMessage } from '../../core/errorMessage';
import { LineRedactor, type SecretSet } from '../../core/redact';
import { TerminalRows } from '../../core/terminalRows';
import { visibleText } from '../../shared/visibleText';

export interface RunOutput {
  line(text?: string): void;
  /** A line rewritten in place (A/B progress). */
  status(text: string): void;
  /** A command's raw output, in chunks of any size: redacted line by line, so a key split across two chunks is still caught. */
  chunk(text: string): void;
}

export interface RunTerminalOptions {
  /** Stay open after the run until a key is pressed: a plain terminal. A task's terminal closes itself (the default). */
  readonly keepOpen?: boolean;
}

/**
 * The one pseudoterminal of a run (evolution, prompt evolution): prints the
 * run, everything redacted (docs/architecture.md, "Secrets"), every control
 * character shown as a mark and every row of a command's output prefixed,
 * broken at the terminal's width (`TerminalRows`, docs/architecture.md,
 * "Text bound for a person"); Ctrl+C or closing it aborts the run; its exit
 * code is the run's.
 */
export class RunTerminal implements vscode.Pseudoterminal {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  private readonly closeEmitter = new vscode.EventEmitter<number>();
  readonly onDidWrite = this.writeEmitter.event;
  readonly onDidClose = this.closeEmitter.event;
  private readonly abort = new AbortController();
  private readonly chunks: LineRedactor;
  /** The terminal's width, from `open` and `setDimensions`; undefined until VS Code says. */
  private columns: number | undefined;
  private readonly rows = new TerminalRows(() => this.columns);
  private statusOpen = false;
  /** The exit code, once a keep-open run has ended and waits for a key. */
  private ended: number | undefined;

  constructor(
    private readonly body: (out: RunOutput, signal: AbortSignal) => Promise<number>,
    private readonly secrets: SecretSet,
    private readonly options: RunTerminalOptions = {},
  ) {
    // Every request of the run listens on this one signal, and the SDK keeps its listener until the run ends.
    setMaxListeners(0, this.abort.signal);
    this.chunks = new LineRedactor(secrets);
  }

  open(initialDimensions: vscode.TerminalDimensions | undefined): void {
    this.columns = initialDimensions?.columns;
    const out: RunOutput = {
      line: (text = '') => {
        this.endStatus();
        // Output still held (a line without its newline) goes first, as output: it never joins Candor's line.
        this.write(this.rows.stream(this.chunks.flush()) + this.rows.own(`${this.secrets.redact(text)}\n`));
      },
      status: (text) => {
        // Candor's own escape (back to the row's start, erase it); the text is one line with its controls shown.
        this.write(this.rows.endRow());
        this.writeEmitter.fire(`\r\x1b[2K${visibleText(this.secrets.redact(text))}`);
        this.statusOpen = true;
      },
      chunk: (text) => {
        this.endStatus();
        this.write(this.rows.stream(this.chunks.push(text)));
      },
    };
    void this.body(out, this.abort.signal).then(
      (code) => this.done(out, code),
      (err: unknown) => {
        out.line(`Error: ${errorMessage(err)}`);
        this.done(out, 1);
      },
    );
  }

  setDimensions(dimensions: vscode.TerminalDimensions): void {
    this.columns = dimensions.columns;
  }

  close(): void {
    this.abort.abort();
  }

  handleInput(data: string): void {
    if (this.ended !== undefined) this.finish(this.ended);
    else if (data === '\x03') {
      this.write(`${this.rows.endRow()}^C\n`);
      this.abort.abort();
    }
  }

  /** The terminal wants CRLF (laid out text holds no CR of its own). */
  private write(text: string): void {
    if (text !== '') this.writeEmitter.fire(text.replace(/\n/g, '\r\n'));
  }

  private endStatus(): void {
    if (!this.statusOpen) return;
    this.statusOpen = false;
    this.writeEmitter.fire('\r\n');
  }

  private done(out: RunOutput, code: number): void {
    this.endStatus();
    this.write(this.rows.stream(this.chunks.flush()) + this.rows.endRow());
    if (!this.options.keepOpen) {
      this.finish(code);
      return;
    }
    this.ended = code;
    out.line('Press any key to close this terminal.');
  }

  private finish(code: number): void {
    this.closeEmitter.fire(code);
    this.writeEmitter.dispose();
    this.closeEmitter.dispose();
  }
}
