import type { Logger } from '../log';
import { redact } from '../redact';

/** What a run prints, logs and streams; see EvolutionIO. */
export interface RunOutput<Phase extends string = string> {
  print(line: string): void;
  onPhase?(phase: Phase): void;
  onOutput?(chunk: string): void;
  readonly log?: Logger;
  /** Writes out what the output stream still holds (a last line without its newline). */
  flush(): void;
}

/** A line longer than this is passed on in pieces (a key that straddles two pieces would then be missed). */
const MAX_HELD_CHARS = 64 * 1024;

/**
 * Everything a run prints, logs or streams, through `redact` with the run's
 * secrets (docs/architecture.md, "Secrets"). Streamed command output is
 * redacted a whole line at a time, so a key split across two chunks is
 * still caught.
 */
export function redactedOutput<Phase extends string>(
  io: { print(line: string): void; onPhase?(phase: Phase): void; onOutput?(chunk: string): void; readonly log?: Logger },
  secrets: readonly string[],
): RunOutput<Phase> {
  const clean = (text: string): string => redact(text, secrets);
  let held = '';
  const flush = (): void => {
    if (held === '') return;
    const text = held;
    held = '';
    io.onOutput?.(clean(text));
  };
  const log = io.log;
  return {
    print(line) {
      flush();
      io.print(clean(line));
    },
    ...(io.onPhase !== undefined ? { onPhase: (phase: Phase) => io.onPhase?.(phase) } : {}),
    ...(io.onOutput !== undefined
      ? {
          onOutput(chunk: string) {
            held += chunk;
            const end = held.lastIndexOf('\n');
            if (end >= 0) {
              const complete = held.slice(0, end + 1);
              held = held.slice(end + 1);
              io.onOutput?.(clean(complete));
            }
            if (held.length > MAX_HELD_CHARS) flush();
          },
        }
      : {}),
    ...(log !== undefined
      ? {
          log: {
            trace: (message: string) => log.trace(clean(message)),
            info: (message: string) => log.info(clean(message)),
            warn: (message: string) => log.warn(clean(message)),
            error: (message: string) => log.error(clean(message)),
          },
        }
      : {}),
    flush,
  };
}
