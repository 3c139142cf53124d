"use client";

import { Badge } from "@lockyard/ui/badge";
import { Panel } from "@lockyard/ui/panel";
import { Table } from "@lockyard/ui/table";
import { useQuery } from "@tanstack/react-query";
import { formatMs, timeOfDay } from "~/lib/format";
import { useTRPC } from "~/trpc/react";
import { ErrorMessage } from "./error-message";

const PALETTE = 4;
/** The chips show the last 20 ticks; the table details the most recent few. */
const TABLE_ROWS = 8;

/** Twice per tick, so a new run shows within half a tick, and never more than once a second. */
function pollEvery(intervalMs: number | undefined): number {
  return Math.min(5_000, Math.max(1_000, Math.round((intervalMs ?? 2_000) / 2)));
}

function colorIndex(instanceId: string): number {
  let h = 0;
  for (const ch of instanceId) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return h % PALETTE;
}

export function JobsPanel() {
  const trpc = useTRPC();
  const runs = useQuery(
    trpc.jobs.runs.queryOptions(
      { limit: 20 },
      { refetchInterval: (q) => pollEvery(q.state.data?.intervalMs) },
    ),
  );
  const list = runs.data?.runs ?? [];
  const ticks = [...list].sort((a, b) => a.tick - b.tick);
  return (
    <Panel
      id="jobs"
      testId="panel-jobs"
      title="Jobs"
      subtitle="Every instance tries the cleanup job on each tick; only the one that gets the lock runs it."
    >
      <ErrorMessage error={runs.error} testId="jobs-error" />
      {ticks.length === 0 ? (
        <p className="muted ticks-empty">No ticks yet.</p>
      ) : (
        <ol
          className="ticks"
          data-testid="job-ticks"
          aria-label="Recent ticks, oldest first: the instance that ran each"
        >
          {ticks.map((r) => (
            <li
              key={r.tick}
              className={`tick tick-c${colorIndex(r.instanceId)}`}
              title={`${timeOfDay(r.scheduledAt)}: ${r.instanceId}`}
              data-testid="job-tick"
              data-instance={r.instanceId}
            >
              {r.instanceId}
            </li>
          ))}
        </ol>
      )}
      <Table
        testId="job-runs"
        caption="Recent job runs"
        columns={[
          {
            key: "at",
            header: "Tick at",
            render: (r) => (
              <time dateTime={new Date(r.scheduledAt).toISOString()} title={`tick ${r.tick}`}>
                {timeOfDay(r.scheduledAt)}
              </time>
            ),
          },
          {
            key: "winner",
            header: "Ran on",
            render: (r) => <Badge tone="info">{r.instanceId}</Badge>,
          },
          { key: "token", header: "Fence", className: "hide-narrow", render: (r) => r.token ?? "–" },
          {
            key: "dur",
            header: "Took",
            className: "hide-narrow",
            render: (r) => <span title={`removed ${r.removed}`}>{formatMs(r.durationMs)}</span>,
          },
        ]}
        rows={list.slice(0, TABLE_ROWS)}
        rowKey={(r) => r.tick}
        rowAttrs={(r) => ({ "data-testid": "job-run", "data-instance": r.instanceId, "data-tick": r.tick })}
        empty={runs.isPending ? "Loading…" : "The job has not run yet."}
      />
    </Panel>
  );
}
