"use client";

import { Badge } from "@lockyard/ui/badge";
import { Panel } from "@lockyard/ui/panel";
import { Table } from "@lockyard/ui/table";
import { useQuery } from "@tanstack/react-query";
import { clockTime, formatMs } from "~/lib/format";
import { useTRPC } from "~/trpc/react";
import { ErrorMessage } from "./error-message";

const PALETTE = 4;
/** The chips show the last 20 ticks; the table details the most recent few. */
const TABLE_ROWS = 8;

function colorIndex(instanceId: string): number {
  let h = 0;
  for (const ch of instanceId) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return h % PALETTE;
}

export function JobsPanel() {
  const trpc = useTRPC();
  const runs = useQuery(trpc.jobs.runs.queryOptions({ limit: 20 }, { refetchInterval: 1000 }));
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
      <div className="ticks" data-testid="job-ticks" title="Recent ticks, oldest first">
        {ticks.map((r) => (
          <span
            key={r.tick}
            className={`tick tick-c${colorIndex(r.instanceId)}`}
            title={`tick ${r.tick}: ${r.instanceId}`}
            data-testid="job-tick"
            data-instance={r.instanceId}
          >
            {r.instanceId}
          </span>
        ))}
        {ticks.length === 0 ? <span className="muted">No ticks yet.</span> : null}
      </div>
      <Table
        testId="job-runs"
        caption="Recent job runs"
        columns={[
          { key: "tick", header: "Tick", render: (r) => <code>{r.tick}</code> },
          { key: "at", header: "Scheduled", render: (r) => clockTime(r.scheduledAt) },
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
