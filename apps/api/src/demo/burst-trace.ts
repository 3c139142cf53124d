import { context, propagation, type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import type { BurstReport } from "../types.js";
import type { BurstRequest } from "./burst-fire.js";

/**
 * The global tracer: telemetry.ts registers the SDK when OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise this
 * records nothing and the burst runs as before.
 */
const tracer = trace.getTracer("@lockyard/api");

const headerSetter = { set: (h: Headers, key: string, value: string) => h.set(key, value) };

/**
 * One trace for a whole burst: a `demo.burst` span (a child of the request that started it, when that was
 * traced), whose requests carry its `traceparent`, so each instance's server span, `lock.acquire` and
 * `lock.hold` of every one of them lands in that trace: one timeline of who waited for the lock and how long.
 */
export class BurstTrace {
  private readonly span: Span;
  /** The trace's id, for the report; undefined when nothing records. */
  readonly traceId: string | undefined;

  constructor(req: BurstRequest, runId: string) {
    this.span = tracer.startSpan("demo.burst", {
      attributes: {
        "lockyard.run_id": runId,
        "lockyard.burst.mode": req.mode,
        "lockyard.burst.requests": req.requests,
        "lockyard.burst.initial_stock": req.initialStock,
        "lockyard.burst.work_ms": req.workMs,
        "lockyard.product_id": req.productId,
      },
    });
    this.traceId = this.span.isRecording() ? this.span.spanContext().traceId : undefined;
  }

  /** A fetch whose requests continue this trace (unchanged when nothing records). */
  fetch(inner: typeof globalThis.fetch): typeof globalThis.fetch {
    if (this.traceId === undefined) return inner;
    const within = trace.setSpan(context.active(), this.span);
    return (input, init) => {
      const headers = new Headers(init?.headers);
      propagation.inject(within, headers, headerSetter);
      return inner(input, { ...init, headers });
    };
  }

  end(outcome: { report: BurstReport } | { error: unknown }): void {
    if ("report" in outcome) {
      const r = outcome.report;
      this.span.setAttributes({
        "lockyard.burst.successes": r.successes,
        "lockyard.burst.sold_out": r.soldOut,
        "lockyard.burst.errors": r.errors,
        "lockyard.burst.oversold": r.oversold,
        "lockyard.burst.final_stock": r.finalStock,
      });
      // An oversell is what the demo exists to show; the span says so where a trace viewer looks.
      if (r.oversold > 0)
        this.span.setStatus({ code: SpanStatusCode.ERROR, message: `oversold ${r.oversold}` });
    } else {
      const message = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
      this.span.setStatus({ code: SpanStatusCode.ERROR, message });
    }
    this.span.end();
  }
}
