import { Badge } from "@lockyard/ui/badge";
import { Stat } from "@lockyard/ui/stat";
import { formatMs, signed } from "~/lib/format";
import type { BurstReport } from "./use-burst";

export function BurstReportView({ report: r }: { report: BurstReport }) {
  const rejected = Object.entries(r.rejected).filter(([, n]) => n > 0);
  const instances = Object.entries(r.perInstance).sort(([a], [b]) => a.localeCompare(b));
  return (
    <div className="report" data-testid="burst-report">
      <div className="stats">
        <Stat label="Successes" value={r.successes} testId="stat-successes" tone="ok" />
        <Stat label="Sold out" value={r.soldOut} testId="stat-sold-out" />
        <Stat
          label="Final stock"
          value={signed(r.finalStock)}
          testId="stat-final-stock"
          tone={r.finalStock < 0 ? "bad" : "neutral"}
        />
        <Stat
          label="Lowest stock"
          value={signed(r.lowestStock)}
          testId="stat-lowest-stock"
          tone={r.lowestStock < 0 ? "bad" : "neutral"}
        />
        <Stat
          label="Oversold"
          value={r.oversold}
          testId="stat-oversold"
          tone={r.oversold > 0 ? "bad" : "ok"}
        />
        <Stat label="Errors" value={r.errors} testId="stat-errors" tone={r.errors > 0 ? "warn" : "neutral"} />
        <Stat label="Duration" value={formatMs(r.durationMs)} testId="stat-duration" />
        <Stat label="Latency p50" value={formatMs(r.latencyMs.p50)} testId="stat-p50" />
        <Stat label="Latency p95" value={formatMs(r.latencyMs.p95)} testId="stat-p95" />
        <Stat label="Latency p99" value={formatMs(r.latencyMs.p99)} testId="stat-p99" />
        <Stat
          label="Redis cmds / success"
          value={r.redisCommandsPerSuccess === null ? "–" : r.redisCommandsPerSuccess.toFixed(1)}
          testId="stat-commands"
        />
      </div>
      <div className="report-lines">
        <div data-testid="report-rejected">
          <span className="muted">Rejected: </span>
          {rejected.length === 0 ? (
            <span>none</span>
          ) : (
            rejected.map(([reason, n]) => (
              <Badge key={reason} tone="warn">
                {reason}: {n}
              </Badge>
            ))
          )}
        </div>
        <div data-testid="report-instances">
          <span className="muted">Served by: </span>
          {instances.map(([id, n]) => (
            <Badge key={id} tone="info">
              {id}: {n} {n === 1 ? "request" : "requests"}
            </Badge>
          ))}
        </div>
        {r.traceId && (
          <div data-testid="report-trace">
            <span className="muted">Trace (OpenTelemetry, every request and its lock spans): </span>
            <code>{r.traceId}</code>
          </div>
        )}
      </div>
    </div>
  );
}
