import { context, type Meter, metrics, propagation, type Tracer, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { Env } from "./env.js";

export interface Telemetry {
  tracer: Tracer;
  meter: Meter;
  /** Flushes what is still buffered to the collector; call after the locks are closed (that ends their spans). */
  shutdown(): Promise<void>;
}

const SCOPE = "@lockyard/api";

/**
 * The OpenTelemetry SDK, exporting over OTLP/HTTP (JSON) to OTEL_EXPORTER_OTLP_ENDPOINT. Unset, nothing is
 * started and null comes back: recording spans nobody receives would cost every request for nothing.
 */
export function startTelemetry(env: Env): Telemetry | null {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return null;
  const resource = resourceFromAttributes({
    "service.name": env.OTEL_SERVICE_NAME,
    "service.instance.id": env.INSTANCE_ID,
  });
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }))],
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: `${endpoint}/v1/metrics` }),
        exportIntervalMillis: env.OTEL_METRIC_EXPORT_INTERVAL,
        exportTimeoutMillis: Math.min(30_000, env.OTEL_METRIC_EXPORT_INTERVAL),
      }),
    ],
  });
  // Global, so spans started in a request's async context find their parent there.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(tracerProvider);
  // A request's `traceparent` header continues the caller's trace (http/trace.ts).
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    tracer: tracerProvider.getTracer(SCOPE),
    meter: meterProvider.getMeter(SCOPE),
    async shutdown() {
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}
