import { createHash } from 'node:crypto';
import { contentText, type ChatMessage, type ToolSpec } from '../messages';
import type { ChatFrames } from './chatFrames';
import type { TokenCounter } from './estimator';
import { ExactCounts, type Counted } from './exactCounts';
import { MESSAGES, UNMEASURED, measureParts, measureText, zeroFeatures } from './heuristic';
import { messageOverhead, messageParts, PER_MESSAGE_OVERHEAD, REPLY_PRIMING } from './messageParts';
import type { PartMark, PayloadChange, PayloadMark, PayloadMeasure, ToolCounts } from './payload';
import type { ToolRendering } from './toolRendering';

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
 *
 * The tool list comes rendered for the provider's family (toolRendering.ts),
 * once per list: each definition is counted on its own, so the list's count
 * is the sum of its tools' and the list's own frame.
 */

export type { PartMark, PayloadChange, PayloadMark, PayloadMeasure, ToolCounts } from './payload';

interface Message extends Counted {
  /** Index in the current history, -1 once a compaction removed it. */
  slot: number;
  /** The template it was framed by, and the message before it then (a frame may depend on it). */
  readonly framedBy?: string;
  readonly after?: ChatMessage;
}

/** A text sent beside the history: the system message (one member), or the tool list (one per definition, then the list's frame). */
interface Part {
  readonly key: string;
  readonly members: readonly Counted[];
  readonly features: readonly number[];
  /** Tokens of its frames that no feature measures. */
  readonly constants: number;
}

/** Characters a reload measures at once, then per slice in the background: a few milliseconds each. */
const SLICE_CHARS = 100_000;
/** System prompts and tool lists remembered, newest last. */
const PART_CAPACITY = 8;
/** The mark of "no tools", as earlier versions stored it: a session reopened without tools sees no change of its list. */
const NO_TOOLS = createHash('sha1').update('t').digest('base64').slice(0, 16);

export class PayloadLedger {
  /** The history, and each message's counts once measured (a reload measures in slices). */
  private messages: ChatMessage[] = [];
  private list: Array<Message | undefined> = [];
  private epoch = '';
  /** Totals of the measured messages; `constants` the tokens of their names. */
  private tokens = 0;
  private constants = 0;
  private features = zeroFeatures();
  private pending = 0;
  /** What is not measured yet: counted by length, characters taken as letters. */
  private sizes: number[] = [];
  private unmeasured = 0;
  private roughTokens = 0;
  private roughChars = 0;
  private nextToMeasure = -1;
  private warming: Promise<void> | undefined;
  private known = new WeakMap<ChatMessage, Message>();
  /** The chat template of the counter in use, when it has one: messages are counted as it frames them. */
  private frames: ChatFrames | undefined;
  /** System prompts by their text, tool lists by their rendering's key; the newest few of each. */
  private readonly systems = new Map<string, Part>();
  private readonly toolLists = new Map<string, Part>();
  private readonly partsByKey = new Map<string, Part>();
  private readonly exact = new ExactCounts(
    (item, before, wasExact) => this.landed(item, before, wasExact),
    (err, counter) => {
      // The tokenizer is gone (its worker failed to load): the heuristic stays, calibrated like any unknown model's.
      this.onError(err);
      if (this.exact.counter === counter) this.useCounter(undefined);
    },
  );

  constructor(private readonly onError: (err: unknown) => void = () => undefined) {}

  /** The tokenizer for the model in use; undefined = the heuristic. A new one recounts in the background. */
  useCounter(counter: TokenCounter | undefined): void {
    if (counter?.name === this.exact.counter?.name) return;
    this.exact.use(counter);
    if (counter?.frames?.family !== this.frames?.family) this.reframe(counter?.frames);
    this.retotal();
    if (counter) {
      this.exact.background = this.list.filter((message): message is Message => message !== undefined);
      for (const part of [...this.systems.values(), ...this.toolLists.values()]) this.exact.urgent.push(...part.members);
    }
    this.exact.drain();
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
    this.exact.background = [];
    this.retotal();
    this.measureSlice();
    this.warm();
    this.exact.drain();
  }

  append(message: ChatMessage): void {
    this.messages.push(message);
    this.sizes.push(0);
    this.list.push(undefined);
    this.unmeasured++;
    this.measureSlot(this.list.length - 1, this.exact.urgent);
    this.exact.drain();
  }

  /**
   * The payload `system + history + tools` as it stands, with the reply's
   * priming: the send path's whole cost. `tools` is the list rendered for the
   * provider's family; '' when the request sends none.
   */
  measure(system: string, tools: ToolRendering | '' = ''): PayloadMeasure {
    const systemPart = this.systemPart(system, tools !== '' && tools.tools.length > 0);
    const toolsPart = this.toolsPart(tools);
    const features = [...this.features];
    addInto(features, systemPart.features);
    addInto(features, toolsPart.features);
    const mark: PayloadMark = { epoch: this.epoch, messages: this.list.length, system: this.markOf(systemPart), tools: this.markOf(toolsPart) };
    features[UNMEASURED] = (features[UNMEASURED] ?? 0) + this.roughChars;
    features[MESSAGES] = (features[MESSAGES] ?? 0) + this.unmeasured;
    // A template's reply priming is part of its system turn's texts.
    const priming = this.frames ? 0 : REPLY_PRIMING;
    return {
      tokens: this.tokens + this.roughTokens + mark.system.tokens + mark.tools.tokens + priming,
      constants: this.constants + systemPart.constants + toolsPart.constants + priming,
      features,
      counter: this.exact.counter?.name ?? 'heuristic',
      pending: this.pending + this.unmeasured + this.inexact(systemPart) + this.inexact(toolsPart),
      rough: this.unmeasured,
      mark,
      since: (earlier) => this.since(earlier, mark),
    };
  }

  /** What each tool definition of a list costs now (exact once counted), and the list's own frame: they add up to the list's count. */
  toolCounts(tools: ToolRendering): ToolCounts {
    const members = this.toolsPart(tools).members;
    const perTool = tools.tools.map((tool, i) => ({ name: tool.name, tokens: members[i] ? this.exact.current(members[i]) : 0 }));
    const frame = members[tools.tools.length];
    const list = frame ? this.exact.current(frame) : 0;
    return { tokens: perTool.reduce((n, t) => n + t.tokens, list), list, tools: perTool };
  }

  /** Resolves when every message is measured and every count asked for has landed (tests, the benchmark). */
  async counted(): Promise<void> {
    while (this.warming || this.exact.settling) await (this.warming ?? this.exact.settling);
  }

  private since(earlier: PayloadMark, now: PayloadMark): PayloadChange | undefined {
    if (earlier.epoch !== now.epoch || earlier.messages > now.messages || now.messages > this.list.length) return undefined;
    let tokens = 0;
    let constants = 0;
    const features = zeroFeatures();
    for (let i = earlier.messages; i < now.messages; i++) {
      // The messages since an anchor are few: measured now if a reload has not got to them yet.
      const message = this.list[i] ?? this.measureSlot(i, this.exact.urgent);
      tokens += this.exact.current(message);
      constants += message.overhead - PER_MESSAGE_OVERHEAD;
      addInto(features, message.features);
    }
    const parts: ('system' | 'tools')[] = [];
    for (const [name, before, after] of [['system', earlier.system, now.system], ['tools', earlier.tools, now.tools]] as const) {
      if (before.key === after.key) continue;
      parts.push(name);
      // Counted again now, when the text is still known: its exact count may have landed since.
      const known = this.partsByKey.get(before.key);
      tokens += after.tokens - (known ? this.partTokens(known) : before.tokens);
      constants += (after.constants ?? 0) - (known?.constants ?? before.constants ?? 0);
      addInto(features, after.features);
      addInto(features, known?.features ?? before.features, -1);
    }
    return { tokens, features, parts, constants };
  }

  private entry(message: ChatMessage, slot: number): Message {
    const after = this.frames ? this.messages[slot - 1] : undefined;
    let entry = this.known.get(message);
    if (!entry || entry.after !== after) {
      const parts = messageParts(message);
      const measured = measureParts(parts);
      const overhead = messageOverhead(message);
      // The heuristic adds the per-message frame itself; a name's token comes on top.
      const heuristic = measured.heuristic + overhead - PER_MESSAGE_OVERHEAD;
      // A template's frame: the tokenizer counts the message as the template writes it; the features stay those of its texts.
      const framed = this.frames?.message(message, after);
      entry = framed
        ? { parts: framed.texts, overhead: framed.overhead, heuristic, features: measured.features, slot, framedBy: this.frames?.family, after }
        : { parts, overhead, heuristic, features: measured.features, slot };
      this.known.set(message, entry);
    }
    entry.slot = slot;
    return entry;
  }

  /** Another chat template (or none): every message, system turn and tool list is framed anew. */
  private reframe(frames: ChatFrames | undefined): void {
    this.frames = frames;
    this.known = new WeakMap();
    this.systems.clear();
    this.toolLists.clear();
    if (this.list.some((message) => message !== undefined)) this.reset(this.messages, this.epoch);
  }

  /**
   * The system message of a text; none for an empty one (nothing is sent for
   * it). Under a chat template, the system turn as it writes it, and the
   * reply's priming; `tools` says whether definitions follow in that turn.
   */
  private systemPart(text: string, tools: boolean): Part {
    const frames = this.frames;
    const cacheKey = frames ? `${frames.family}:${tools ? 't' : 'n'}:${text}` : text;
    const found = this.systems.get(cacheKey);
    if (found) return found;
    const features = zeroFeatures();
    const members: Counted[] = [];
    if (frames) {
      const framed = frames.system(text, tools);
      features[MESSAGES] = 1;
      members.push(countedOf(framed.texts, framed.overhead, features));
    } else if (text !== '') {
      features[MESSAGES] = 1;
      members.push(countedOf(['system', text], PER_MESSAGE_OVERHEAD, features));
    }
    const key = createHash('sha1').update(frames ? `s${cacheKey}` : `s${text}`).digest('base64').slice(0, 16);
    // Its frame is the `messages` feature's.
    return this.remember(this.systems, cacheKey, { key, members, features, constants: frames ? members.reduce((n, m) => n + m.overhead, 0) : 0 });
  }

  /** A rendered tool list: one member per definition, then the list's frame. */
  private toolsPart(tools: ToolRendering | ''): Part {
    const none = tools === '' || tools.tools.length === 0;
    const frames = this.frames;
    const key = none ? NO_TOOLS : frames ? `${frames.family}:${tools.key}` : tools.key;
    const found = this.toolLists.get(key);
    if (found) return found;
    const features = zeroFeatures();
    const items = none ? [] : frames ? framedTools(frames, tools.specs) : [...tools.tools, tools.list];
    const members = items.map((item) => countedOf(item.texts, item.overhead, features));
    const constants = members.reduce((n, member) => n + member.overhead, 0);
    return this.remember(this.toolLists, key, { key, members, features, constants });
  }

  /** Keeps the newest few parts of a kind; an exact count is asked for the new one at once. */
  private remember(cache: Map<string, Part>, cacheKey: string, part: Part): Part {
    if (cache.size >= PART_CAPACITY) {
      const oldest = cache.entries().next().value;
      if (oldest) {
        cache.delete(oldest[0]);
        this.partsByKey.delete(oldest[1].key);
      }
    }
    cache.set(cacheKey, part);
    this.partsByKey.set(part.key, part);
    if (this.exact.counter) {
      const counted = part.members.filter((member) => member.parts.length > 0);
      if (counted.length > 0) {
        this.exact.urgent.push(...counted);
        this.exact.drain();
      }
    }
    return part;
  }

  private partTokens(part: Part): number {
    let tokens = 0;
    for (const member of part.members) tokens += this.exact.current(member);
    return tokens;
  }

  /** Members of a part still counted by the heuristic. */
  private inexact(part: Part): number {
    let n = 0;
    for (const member of part.members) if (!this.exact.isExact(member)) n++;
    return n;
  }

  private markOf(part: Part): PartMark {
    return { key: part.key, tokens: this.partTokens(part), features: part.features, constants: part.constants };
  }

  private retotal(): void {
    this.tokens = 0;
    this.constants = 0;
    this.pending = 0;
    this.features = zeroFeatures();
    for (const message of this.list) {
      if (!message) continue;
      this.tokens += this.exact.current(message);
      this.constants += message.overhead - PER_MESSAGE_OVERHEAD;
      addInto(this.features, message.features);
      if (!this.exact.isExact(message)) this.pending++;
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
    this.tokens += this.exact.current(entry);
    this.constants += entry.overhead - PER_MESSAGE_OVERHEAD;
    addInto(this.features, entry.features);
    if (!this.exact.isExact(entry)) {
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
      this.measureSlot(slot, this.exact.background);
    }
  }

  /** The rest of a reloaded history, a slice per turn of the event loop. */
  private warm(): void {
    if (this.warming || this.unmeasured === 0) return;
    this.warming = new Promise<void>((resolve) => {
      const step = (): void => {
        this.measureSlice();
        this.exact.drain();
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

  /** An exact count landed: a message of the history moves the total by the difference. */
  private landed(item: Counted, before: number, wasExact: boolean): void {
    const slot = (item as Partial<Message>).slot;
    if (slot !== undefined && slot >= 0 && this.list[slot] === item) {
      this.tokens += this.exact.current(item) - before;
      if (!wasExact) this.pending--;
    }
  }
}

/** A tool list as a template writes it: each definition, then the list's frame (the order `toolCounts` reads). */
function framedTools(frames: ChatFrames, specs: readonly ToolSpec[]): { texts: readonly string[]; overhead: number }[] {
  const framed = frames.tools(specs);
  return [...framed.tools.map((tool) => ({ texts: tool.texts, overhead: 0 })), framed.list];
}

/** Characters of a message, without reading them: what it counts by until it is measured. */
function roughLength(message: ChatMessage): number {
  let length = message.role.length + contentText(message).length;
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) length += call.function.name.length + call.function.arguments.length;
  }
  return length;
}

/** Texts and the constant tokens around them, measured by the heuristic; their characters are added into `into`. */
function countedOf(texts: readonly string[], overhead: number, into: number[]): Counted {
  const features = zeroFeatures();
  let heuristic = overhead;
  for (const text of texts) heuristic += measureText(text, features);
  addInto(into, features);
  return { parts: texts.filter((text) => text.length > 0), overhead, heuristic, features };
}

function roughTokens(length: number): number {
  return Math.ceil(length / 4) + PER_MESSAGE_OVERHEAD;
}

function addInto(into: number[], values: readonly number[], sign = 1): void {
  for (let i = 0; i < values.length; i++) into[i] = (into[i] ?? 0) + sign * (values[i] ?? 0);
}
