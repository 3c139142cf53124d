import type { Attributes, HrTime } from "@opentelemetry/api";
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  type MetricData,
  MetricReader,
} from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import type { LockTelemetryOptions } from "../../src/otel.js";

/** Collects on demand: the test reads the current values, no export interval. */
class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** An in-memory tracer and meter, and readers of what they recorded. */
export function testTelemetry() {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const options: Required<Pick<LockTelemetryOptions, "tracer" | "meter">> = {
    tracer: tracerProvider.getTracer("test"),
    meter: meterProvider.getMeter("test"),
  };

  const spans = (name?: string): ReadableSpan[] =>
    exporter.getFinishedSpans().filter((s) => name === undefined || s.name === name);

  async function metrics(): Promise<MetricData[]> {
    const { resourceMetrics } = await reader.collect();
    return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
  }

  async function points<T>(name: string): Promise<DataPoint<T>[]> {
    const m = (await metrics()).find((x) => x.descriptor.name === name);
    return (m?.dataPoints ?? []) as DataPoint<T>[];
  }

  /** The value of a counter (or up-down counter) for the data points whose attributes include `match`. */
  async function sum(name: string, match: Attributes = {}): Promise<number> {
    const ps = await points<number>(name);
    return ps.filter((p) => includes(p.attributes, match)).reduce((a, p) => a + p.value, 0);
  }

  /** How many values a histogram recorded for the data points whose attributes include `match`. */
  async function count(name: string, match: Attributes = {}): Promise<number> {
    const ps = await points<Histogram>(name);
    return ps.filter((p) => includes(p.attributes, match)).reduce((a, p) => a + p.value.count, 0);
  }

  async function shutdown(): Promise<void> {
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
  }

  return { options, spans, metrics, sum, count, shutdown };
}

function includes(attrs: Attributes, match: Attributes): boolean {
  return Object.entries(match).every(([k, v]) => attrs[k] === v);
}

export const eventNames = (s: ReadableSpan): string[] => s.events.map((e) => e.name);

export const ms = ([s, ns]: HrTime): number => s * 1000 + ns / 1e6;
