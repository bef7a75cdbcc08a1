import type { Logger } from '../log';
import { redact } from '../redact';
import { visibleText } from '../../shared/visibleText';

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
 * still caught. A printed line is one line whatever it quotes (the model's
 * words, a file name, a server's error): its control characters, a line
 * feed among them, are shown as marks, so nothing it holds starts a row of
 * its own or drives the terminal; logged messages keep their line feeds.
 * Streamed output is left to the terminal it goes to, which shows its
 * marks and prefixes its rows (docs/architecture.md, "Text bound for a
 * person").
 */
export function redactedOutput<Phase extends string>(
  io: { print(line: string): void; onPhase?(phase: Phase): void; onOutput?(chunk: string): void; readonly log?: Logger },
  secrets: readonly string[],
): RunOutput<Phase> {
  const clean = (text: string): string => redact(text, secrets);
  const oneLine = (text: string): string => visibleText(clean(text));
  const message = (text: string): string => visibleText(clean(text), { keepLayout: true });
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
      io.print(oneLine(line));
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
            trace: (text: string) => log.trace(message(text)),
            info: (text: string) => log.info(message(text)),
            warn: (text: string) => log.warn(message(text)),
            error: (text: string) => log.error(message(text)),
          },
        }
      : {}),
    flush,
  };
}
