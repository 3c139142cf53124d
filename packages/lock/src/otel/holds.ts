import { type Attributes, type Span, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { LostReason } from "../errors.js";
import type { LockEvent } from "../events.js";
import { ATTR, EVENT, SPAN } from "./names.js";
import type { Recorder } from "./recorder.js";

type Of<T extends LockEvent["type"]> = Extract<LockEvent, { type: T }>;

interface Hold {
  span: Span;
  startedAt: number;
  labels: Attributes;
}

/**
 * A hold whose release never got an answer stays open; past this many, new holds go untraced (metrics still
 * count them) rather than the map growing without bound.
 */
const MAX_OPEN_HOLDS = 100_000;

/**
 * The hold spans of one Locks: one per resource and owner, from the grant to the release that deletes the
 * key or to the loss. Re-entries and renewals are events on it.
 */
export class Holds {
  private readonly open = new Map<string, Hold>();

  constructor(private readonly r: Recorder) {}

  granted(e: Of<"acquired">): Span | undefined {
    const key = holdKey(e.resource, e.owner);
    const cur = this.open.get(key);
    if (cur && e.count > 1) {
      cur.span.addEvent(EVENT.reentered, { [ATTR.count]: e.count });
      return cur.span;
    }
    // A fresh grant to an owner we still saw holding: its key had gone (the core's own regrant case).
    if (cur) this.lose(key, cur, "expired");
    if (this.open.size >= MAX_OPEN_HOLDS) return undefined;
    const labels = this.r.labels(e.resource, e.kind ?? "mutex");
    const span = this.r.tracer.startSpan(SPAN.hold, {
      kind: SpanKind.INTERNAL,
      attributes: {
        [ATTR.resource]: this.r.name(e.resource),
        [ATTR.owner]: this.r.name(e.owner),
        [ATTR.count]: e.count,
        ...(e.token === null ? {} : { [ATTR.token]: e.token }),
        ...labels,
      },
    });
    this.open.set(key, { span, startedAt: performance.now(), labels });
    return span;
  }

  renewed(e: Of<"renewed">): void {
    const hold = this.open.get(holdKey(e.resource, e.owner));
    hold?.span.addEvent(EVENT.renewed, { [ATTR.leaseMs]: e.leaseMs });
    this.r.instruments.renewals.add(1, hold?.labels ?? this.r.labels(e.resource, e.kind ?? "mutex"));
  }

  released(e: Of<"released">): void {
    const key = holdKey(e.resource, e.owner);
    const hold = this.open.get(key);
    if (!hold) return;
    hold.span.addEvent(EVENT.released, {
      [ATTR.releaseResult]: e.result,
      ...(e.late ? { [ATTR.releaseLate]: true } : {}),
    });
    // "decremented": an outer re-entry is still held. "not-owner": the core's "lost" event follows and ends it.
    if (e.result === "released") this.end(key, hold, "released");
  }

  lost(e: Of<"lost">): void {
    const key = holdKey(e.resource, e.owner);
    const hold = this.open.get(key);
    this.r.instruments.failures.add(1, {
      ...(hold?.labels ?? this.r.labels(e.resource, e.kind ?? "mutex")),
      [ATTR.failureReason]: e.reason,
    });
    if (hold) this.lose(key, hold, e.reason);
  }

  /** close(): held locks are left to expire; their spans end here, or they would stay open forever. */
  closeAll(): void {
    for (const [key, hold] of this.open) {
      hold.span.addEvent(EVENT.closed);
      this.end(key, hold, undefined);
    }
  }

  private lose(key: string, hold: Hold, reason: LostReason): void {
    hold.span.addEvent(EVENT.lost, { [ATTR.lostReason]: reason });
    hold.span.setStatus({ code: SpanStatusCode.ERROR, message: `lost (${reason})` });
    this.end(key, hold, "lost");
  }

  /** `outcome` undefined: not a hold that ended (close()), so it is not measured. */
  private end(key: string, hold: Hold, outcome: "released" | "lost" | undefined): void {
    this.open.delete(key);
    const heldMs = performance.now() - hold.startedAt;
    hold.span.setAttribute(ATTR.heldMs, heldMs);
    hold.span.end();
    if (outcome) this.r.instruments.hold.record(heldMs / 1000, { ...hold.labels, [ATTR.outcome]: outcome });
  }
}

/** Resource names hold no control characters, so NUL cannot occur inside either part. */
function holdKey(resource: string, owner: string): string {
  return `${resource}\u0000${owner}`;
}
