import { Badge } from "@lockyard/ui/badge";
import { type Column, Table } from "@lockyard/ui/table";
import { formatMs, signed, timeOfDay } from "~/lib/format";
import { verdictOf } from "./burst-verdict";
import type { BurstRun } from "./use-burst";

// The verdict comes first: it says whether a run oversold. Detail columns ("hist-more") give way when
// the panel is narrow (a container query), so the table fits without scrolling sideways.
const columns: Column<BurstRun>[] = [
  { key: "id", header: "#", render: (r) => r.id },
  {
    key: "verdict",
    header: "Verdict",
    render: (r) => {
      const v = verdictOf(r.report);
      return (
        <Badge tone={v.safe ? "ok" : "bad"} testId="history-verdict">
          {v.safe ? "safe" : "oversold"}
        </Badge>
      );
    },
  },
  { key: "mode", header: "Mode", render: (r) => <code>{r.report.mode}</code> },
  { key: "over", header: "Oversold", render: (r) => r.report.oversold },
  { key: "low", header: "Lowest", render: (r) => signed(r.report.lowestStock) },
  { key: "ok", header: "Sold", className: "hist-more", render: (r) => r.report.successes },
  { key: "req", header: "Requests", className: "hist-more", render: (r) => r.report.requests },
  { key: "dur", header: "Duration", className: "hist-more", render: (r) => formatMs(r.report.durationMs) },
  { key: "p95", header: "p95", className: "hist-most", render: (r) => formatMs(r.report.latencyMs.p95) },
  {
    key: "cmds",
    header: "Cmds/success",
    className: "hist-most",
    render: (r) =>
      r.report.redisCommandsPerSuccess === null ? "–" : r.report.redisCommandsPerSuccess.toFixed(1),
  },
  { key: "at", header: "Started", className: "hist-most", render: (r) => timeOfDay(r.startedAt) },
];

export function BurstHistory({ runs }: { runs: readonly BurstRun[] }) {
  return (
    <div className="history">
      <h3 className="h3">Past runs</h3>
      <Table
        testId="burst-history"
        caption="Past flash-sale runs"
        columns={columns}
        rows={runs}
        rowKey={(r) => r.id}
        rowAttrs={(r) => ({ "data-testid": "history-row", "data-mode": r.report.mode })}
        empty="Runs you start appear here, side by side."
      />
    </div>
  );
}
