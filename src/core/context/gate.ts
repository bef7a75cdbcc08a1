import type { AnchorDriftEvent, DriftSink, Identity } from './driftEvents';
import { initialGateState, type GateState } from './gateState';
import {
  beginRequest,
  compacted,
  settleRequest,
  type Projection,
  type RequestResult,
  type Settlement,
} from './transitions';

export interface ContextGateOptions {
  readonly session: string;
  readonly sink: DriftSink;
  /** State from the session file; a fresh session starts without one. */
  readonly state?: GateState;
}

export interface AfterRequestOutcome {
  /** `ignored`: no request was in flight, or a compaction replaced its history. */
  readonly kind: Settlement | 'ignored';
  /** The window this request closed, as written to the drift log. */
  readonly drift?: AnchorDriftEvent;
}

/**
 * The anchored compaction gate of one session (design §1).
 *
 * Call `beforeRequest` right before a request goes out and `afterRequest`
 * when it ends, whatever the end. `project` answers the same question
 * without changing anything (the gauge, the compaction decision).
 *
 * State is committed before events reach the sink, so a sink that throws
 * (disk full) cannot leave the gate half-updated.
 */
export class ContextGate {
  readonly session: string;
  private readonly sink: DriftSink;
  private current: GateState;
  private inFlight: Identity | null = null;

  constructor(options: ContextGateOptions) {
    this.session = options.session;
    this.sink = options.sink;
    this.current = options.state ?? initialGateState();
  }

  /** Plain JSON for the session file. */
  snapshot(): GateState {
    return this.current;
  }

  /** The gauge's warning state: a window is open and has warned. */
  get warning(): boolean {
    return this.current.window?.warned ?? false;
  }

  /** What beforeRequest would answer now, with no event and no change. */
  project(identity: Identity, estNow: number): Projection {
    return beginRequest(this.current, this.session, identity, estNow).projection;
  }

  beforeRequest(identity: Identity, estNow: number): Projection {
    const step = beginRequest(this.current, this.session, identity, estNow);
    this.current = step.state;
    this.inFlight = identity;
    for (const event of step.events) this.sink.record(event);
    return step.projection;
  }

  afterRequest(result: RequestResult): AfterRequestOutcome {
    const identity = this.inFlight;
    if (!identity) return { kind: 'ignored' };
    this.inFlight = null;
    const settled = settleRequest(this.current, this.session, identity, result);
    this.current = settled.state;
    for (const event of settled.events) this.sink.record(event);
    const drift = settled.events[0];
    return drift ? { kind: settled.outcome, drift } : { kind: settled.outcome };
  }

  /**
   * The history was summarized: drop the anchor, set the one-shot marker. A
   * request still in flight measured the old history; its result is ignored.
   */
  afterCompaction(): void {
    this.current = compacted(this.current);
    this.inFlight = null;
  }
}
