/** The log port. The host backs it with the "Candor" LogOutputChannel. */
export interface Logger {
  trace(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const silentLogger: Logger = {
  trace: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** Collects lines; for the CLI (printing) and for tests that read the log. */
export class MemoryLogger implements Logger {
  readonly lines: string[] = [];
  constructor(private readonly echo?: (line: string) => void) {}
  trace(message: string): void { this.push('trace', message); }
  info(message: string): void { this.push('info', message); }
  warn(message: string): void { this.push('warn', message); }
  error(message: string): void { this.push('error', message); }
  private push(level: string, message: string): void {
    const line = `[${level}] ${message}`;
    this.lines.push(line);
    this.echo?.(line);
  }
}
