import { createHash } from 'node:crypto';
import { contentText, type ChatMessage } from '../messages';
import type { TokenCounter } from './estimator';
import { LETTERS, MESSAGES, measureParts, measureText, zeroFeatures } from './heuristic';
import { messageParts, PER_MESSAGE_OVERHEAD } from './messageParts';
import type { PartMark, PayloadChange, PayloadMark, PayloadMeasure } from './payload';

/**
 * The counts of everything a request sends, kept as messages arrive so that
 * the send path only adds up what is already known (docs/architecture.md,
 * "Context gate").
 *
 * Each message is measured by the heuristic the moment it is appended (a
 * pass over its characters, which also yields its characters per script
 * class), and its exact count is asked of the tokenizer in the background.
 * Until that count lands the message counts by the heuristic alone; when it
 * lands, the running total is corrected. A reload measures the newest
 * messages by the heuristic at once and the rest in slices that yield to the
 * event loop (until then each counts by its length alone), newest first,
 * and warms the exact counts in the background.
 *
 * The history is append-only between compactions; a compaction starts a new
 * epoch (`reset`). A mark taken when a request is sent lets a later request
 * measure exactly what changed since: the messages appended after it, and
 * the difference in the system prompt and the tool list.
 */

export type { PartMark, PayloadChange, PayloadMark, PayloadMeasure } from './payload';

interface Counted {
  readonly parts: readonly string[];
  readonly overhead: number;
  readonly heuristic: number;
  readonly features: readonly number[];
  exact?: number;
  exactBy?: string;
}

interface Message extends Counted {
  /** Index in the current history, -1 once a compaction removed it. */
  slot: number;
}

interface Part extends Counted {
  readonly key: string;
}

/** Texts per worker request: small enough that a new message never waits long behind a reload's warm-up. */
const BATCH_CHARS = 200_000;
/** Characters a reload measures at once, then per slice in the background: a few milliseconds each. */
const SLICE_CHARS = 100_000;
/** System prompts and tool lists remembered, newest last. */
const PART_CAPACITY = 8;

export class PayloadLedger {
  /** The history, and each message's counts once measured (a reload measures in slices). */
  private messages: ChatMessage[] = [];
  private list: Array<Message | undefined> = [];
  private epoch = '';
  private counter: TokenCounter | undefined;
  /** Totals of the measured messages. */
  private tokens = 0;
  private features = zeroFeatures();
  private pending = 0;
  /** What is not measured yet: counted by length, characters taken as letters. */
  private sizes: number[] = [];
  private unmeasured = 0;
  private roughTokens = 0;
  private roughChars = 0;
  private nextToMeasure = -1;
  private warming: Promise<void> | undefined;
  private readonly known = new WeakMap<ChatMessage, Message>();
  private readonly parts = new Map<string, Part>();
  private readonly partsByKey = new Map<string, Part>();
  private readonly urgent: Counted[] = [];
  private background: Counted[] = [];
  private draining: Promise<void> | undefined;

  constructor(private readonly onError: (err: unknown) => void = () => undefined) {}

  /** The tokenizer for the model in use; undefined = the heuristic. A new one recounts in the background. */
  useCounter(counter: TokenCounter | undefined): void {
    if (counter?.name === this.counter?.name) return;
    this.counter = counter;
    this.retotal();
    this.urgent.length = 0;
    this.background = counter ? this.list.filter((message): message is Message => message !== undefined) : [];
    if (counter) for (const part of this.parts.values()) this.urgent.push(part);
    this.drain();
  }

  /** A new history: on open, and after each compaction. Kept messages keep their counts. */
  reset(history: readonly ChatMessage[], epoch: string): void {
    for (const message of this.list) if (message) message.slot = -1;
    this.epoch = epoch;
    this.messages = [...history];
    this.list = new Array<Message | undefined>(history.length);
    this.sizes = history.map(roughLength);
    this.unmeasured = history.length;
    this.roughChars = 0;
    this.roughTokens = 0;
    for (const size of this.sizes) {
      this.roughChars += size;
      this.roughTokens += roughTokens(size);
    }
    this.nextToMeasure = history.length - 1;
    this.background = [];
    this.retotal();
    this.measureSlice();
    this.warm();
    this.drain();
  }

  append(message: ChatMessage): void {
    this.messages.push(message);
    this.sizes.push(0);
    this.list.push(undefined);
    this.unmeasured++;
    this.measureSlot(this.list.length - 1, this.urgent);
    this.drain();
  }

  /** The payload `system + history + tools` as it stands: the send path's whole cost. */
  measure(system: string, tools: string): PayloadMeasure {
    const systemPart = this.part(system, true);
    const toolsPart = this.part(tools, false);
    const features = [...this.features];
    addInto(features, systemPart.features);
    addInto(features, toolsPart.features);
    const mark: PayloadMark = { epoch: this.epoch, messages: this.list.length, system: this.markOf(systemPart), tools: this.markOf(toolsPart) };
    features[LETTERS] = (features[LETTERS] ?? 0) + this.roughChars;
    features[MESSAGES] = (features[MESSAGES] ?? 0) + this.unmeasured;
    return {
      tokens: this.tokens + this.roughTokens + mark.system.tokens + mark.tools.tokens,
      features,
      counter: this.counter?.name ?? 'heuristic',
      pending: this.pending + this.unmeasured + (this.isExact(systemPart) ? 0 : 1) + (this.isExact(toolsPart) ? 0 : 1),
      rough: this.unmeasured,
      mark,
      since: (earlier) => this.since(earlier, mark),
    };
  }

  /** Resolves when every message is measured and every count asked for has landed (tests, the benchmark). */
  async counted(): Promise<void> {
    while (this.warming || this.draining) await (this.warming ?? this.draining);
  }

  private since(earlier: PayloadMark, now: PayloadMark): PayloadChange | undefined {
    if (earlier.epoch !== now.epoch || earlier.messages > now.messages || now.messages > this.list.length) return undefined;
    let tokens = 0;
    const features = zeroFeatures();
    for (let i = earlier.messages; i < now.messages; i++) {
      // The messages since an anchor are few: measured now if a reload has not got to them yet.
      const message = this.list[i] ?? this.measureSlot(i, this.urgent);
      tokens += this.current(message);
      addInto(features, message.features);
    }
    const parts: ('system' | 'tools')[] = [];
    for (const [name, before, after] of [['system', earlier.system, now.system], ['tools', earlier.tools, now.tools]] as const) {
      if (before.key === after.key) continue;
      parts.push(name);
      // Counted again now, when the text is still known: its exact count may have landed since.
      const known = this.partsByKey.get(before.key);
      tokens += after.tokens - (known ? this.current(known) : before.tokens);
      addInto(features, after.features);
      addInto(features, known?.features ?? before.features, -1);
    }
    return { tokens, features, parts };
  }

  private entry(message: ChatMessage, slot: number): Message {
    let entry = this.known.get(message);
    if (!entry) {
      const parts = messageParts(message);
      const measured = measureParts(parts);
      entry = { parts, overhead: PER_MESSAGE_OVERHEAD, heuristic: measured.heuristic, features: measured.features, slot };
      this.known.set(message, entry);
    }
    entry.slot = slot;
    return entry;
  }

  private part(text: string, asSystemMessage: boolean): Part {
    const cacheKey = `${asSystemMessage ? 's' : 't'}${text}`;
    const found = this.parts.get(cacheKey);
    if (found) return found;
    const features = zeroFeatures();
    let heuristic = measureText(text, features);
    // No text, no message: nothing is sent for it.
    const asMessage = asSystemMessage && text !== '';
    if (asMessage) {
      heuristic += PER_MESSAGE_OVERHEAD + measureText('system', features);
      features[MESSAGES] = 1;
    }
    const key = createHash('sha1').update(cacheKey).digest('base64').slice(0, 16);
    const texts = text === '' ? [] : asMessage ? ['system', text] : [text];
    const part: Part = { key, parts: texts, overhead: asMessage ? PER_MESSAGE_OVERHEAD : 0, heuristic, features };
    if (this.parts.size >= PART_CAPACITY) {
      const oldest = this.parts.entries().next().value;
      if (oldest) {
        this.parts.delete(oldest[0]);
        this.partsByKey.delete(oldest[1].key);
      }
    }
    this.parts.set(cacheKey, part);
    this.partsByKey.set(key, part);
    if (this.counter && texts.length > 0) {
      this.urgent.push(part);
      this.drain();
    }
    return part;
  }

  private markOf(part: Part): PartMark {
    return { key: part.key, tokens: this.current(part), features: part.features };
  }

  private isExact(counted: Counted): boolean {
    return !this.counter || counted.parts.length === 0 || counted.exactBy === this.counter.name;
  }

  private current(counted: Counted): number {
    return this.counter && counted.exactBy === this.counter.name && counted.exact !== undefined ? counted.exact : counted.heuristic;
  }

  private retotal(): void {
    this.tokens = 0;
    this.pending = 0;
    this.features = zeroFeatures();
    for (const message of this.list) {
      if (!message) continue;
      this.tokens += this.current(message);
      addInto(this.features, message.features);
      if (!this.isExact(message)) this.pending++;
    }
  }

  /** Measures one message of the history by the heuristic; its exact count is queued on `queue`. */
  private measureSlot(slot: number, queue: Counted[]): Message {
    const measured = this.list[slot];
    if (measured) return measured;
    const entry = this.entry(this.messages[slot] as ChatMessage, slot);
    this.list[slot] = entry;
    const size = this.sizes[slot] ?? 0;
    this.unmeasured--;
    this.roughChars -= size;
    this.roughTokens -= size > 0 ? roughTokens(size) : 0;
    this.tokens += this.current(entry);
    addInto(this.features, entry.features);
    if (!this.isExact(entry)) {
      this.pending++;
      queue.push(entry);
    }
    return entry;
  }

  /** Measures the next slice of a reloaded history, newest first. */
  private measureSlice(): void {
    let chars = 0;
    while (this.nextToMeasure >= 0 && chars < SLICE_CHARS) {
      const slot = this.nextToMeasure--;
      if (this.list[slot]) continue;
      chars += this.sizes[slot] ?? 0;
      this.measureSlot(slot, this.background);
    }
  }

  /** The rest of a reloaded history, a slice per turn of the event loop. */
  private warm(): void {
    if (this.warming || this.unmeasured === 0) return;
    this.warming = new Promise<void>((resolve) => {
      const step = (): void => {
        this.measureSlice();
        this.drain();
        if (this.nextToMeasure >= 0) {
          setImmediate(step);
          return;
        }
        this.warming = undefined;
        resolve();
      };
      setImmediate(step);
    });
  }

  /** Counts what is queued, one worker request at a time, the newest messages first. */
  private drain(): void {
    if (this.draining || !this.counter) return;
    this.draining = this.drainLoop().finally(() => {
      this.draining = undefined;
      if (this.counter && (this.urgent.length > 0 || this.background.length > 0)) this.drain();
    });
  }

  private async drainLoop(): Promise<void> {
    while (this.counter && (this.urgent.length > 0 || this.background.length > 0)) {
      const counter = this.counter;
      const batch = this.takeBatch(counter.name);
      if (batch.length === 0) continue;
      let counts: number[];
      try {
        counts = await counter.count(batch.flatMap((item) => item.parts));
      } catch (err) {
        // The tokenizer is gone (its worker failed to load): the heuristic stays, calibrated like any unknown model's.
        this.onError(err);
        if (this.counter === counter) this.useCounter(undefined);
        return;
      }
      // A switch while counting: these counts belong to another tokenizer.
      if (this.counter !== counter) continue;
      let at = 0;
      for (const item of batch) {
        let exact = item.overhead;
        for (let i = 0; i < item.parts.length; i++) exact += counts[at++] ?? 0;
        this.land(item, exact, counter.name);
      }
    }
  }

  private takeBatch(counterName: string): Counted[] {
    const batch = new Set<Counted>();
    let chars = 0;
    while (chars < BATCH_CHARS) {
      const item = this.urgent.pop() ?? this.background.pop();
      if (!item) break;
      if (item.exactBy === counterName || batch.has(item)) continue;
      batch.add(item);
      for (const part of item.parts) chars += part.length;
    }
    return [...batch];
  }

  private land(item: Counted, exact: number, counterName: string): void {
    const before = this.current(item);
    const wasExact = this.isExact(item);
    item.exact = exact;
    item.exactBy = counterName;
    const slot = (item as Partial<Message>).slot;
    if (slot !== undefined && slot >= 0 && this.list[slot] === item) {
      this.tokens += exact - before;
      if (!wasExact) this.pending--;
    }
  }
}

/** Characters of a message, without reading them: what it counts by until it is measured. */
function roughLength(message: ChatMessage): number {
  let length = message.role.length + contentText(message).length;
  if (message.role === 'tool') length += message.tool_call_id.length;
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) length += call.function.name.length + call.function.arguments.length;
  }
  return length;
}

function roughTokens(length: number): number {
  return Math.ceil(length / 4) + PER_MESSAGE_OVERHEAD;
}

function addInto(into: number[], values: readonly number[], sign = 1): void {
  for (let i = 0; i < values.length; i++) into[i] = (into[i] ?? 0) + sign * (values[i] ?? 0);
}
