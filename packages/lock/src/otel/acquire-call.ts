import { type Attributes, type Span, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { LockEvent } from "../events.js";
import { type AcquireOutcome, ATTR, EVENT, SPAN } from "./names.js";
import { FAILED, failureOutcome } from "./outcome.js";
import type { LockKindLabel, Recorder } from "./recorder.js";

export type Operation = "acquire" | "tryAcquire" | "withLock";
type Acquired = Extract<LockEvent, { type: "acquired" }>;

/**
 * One acquire, tryAcquire or withLock call, from the call to the grant or the give-up: its span, its place in
 * `lock.waiters`, its wait. The lock's events reach it through the call's async context (see instrument.ts).
 */
export class AcquireCall {
  done = false;
  /** The hold span of the grant, so withLock can run its callback under it. */
  hold: Span | undefined;
  private readonly started = performance.now();
  private readonly span: Span;
  private readonly labels: Attributes;
  private waiting = false;

  constructor(
    private readonly r: Recorder,
    readonly operation: Operation,
    readonly resource: string,
    readonly kind: LockKindLabel,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.labels = r.labels(resource, kind);
    this.span = r.tracer.startSpan(SPAN.acquire, {
      kind: SpanKind.INTERNAL,
      attributes: { [ATTR.resource]: r.name(resource), [ATTR.operation]: operation, ...this.labels },
    });
  }

  /** Someone else holds the lock: the call starts waiting (tryAcquire never waits). */
  contended(pttlMs: number): void {
    this.span.addEvent(EVENT.contended, { [ATTR.pttlMs]: pttlMs });
    if (this.waiting || this.operation === "tryAcquire") return;
    this.waiting = true;
    this.r.instruments.waiters.add(1, this.labels);
  }

  granted(e: Acquired, hold: Span | undefined): void {
    this.hold = hold;
    this.span.setAttributes({ [ATTR.owner]: this.r.name(e.owner), [ATTR.count]: e.count });
    if (e.token !== null) this.span.setAttribute(ATTR.token, e.token);
    this.finish("acquired", e.waitedMs, e.attempts);
  }

  /** The call's promise settled; a no-op when an event already ended the wait. */
  settled(value: unknown): void {
    if (value === null) this.finish("refused", undefined, 1);
    else this.finish("acquired");
  }

  failed(err: unknown): void {
    if (this.done) return;
    const outcome = failureOutcome(err, this.signal);
    if (outcome === "error") this.r.recordError(this.span, err);
    this.finish(outcome);
  }

  finish(outcome: AcquireOutcome, waitedMs = performance.now() - this.started, attempts?: number): void {
    if (this.done) return;
    this.done = true;
    const { instruments } = this.r;
    if (this.waiting) instruments.waiters.add(-1, this.labels);
    this.span.setAttributes({ [ATTR.outcome]: outcome, [ATTR.waitMs]: waitedMs });
    if (attempts !== undefined) this.span.setAttribute(ATTR.attempts, attempts);
    if (FAILED.has(outcome)) {
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
      instruments.failures.add(1, { ...this.labels, [ATTR.failureReason]: outcome });
    }
    this.span.end();
    instruments.wait.record(waitedMs / 1000, { ...this.labels, [ATTR.outcome]: outcome });
  }
}
