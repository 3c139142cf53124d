import { Badge } from "@lockyard/ui/badge";
import { type Column, Table } from "@lockyard/ui/table";
import { clockTime, formatMs, signed } from "~/lib/format";
import { verdictOf } from "./burst-verdict";
import type { BurstRun } from "./use-burst";

const columns: Column<BurstRun>[] = [
  { key: "id", header: "#", render: (r) => r.id },
  { key: "at", header: "Started", className: "hide-narrow", render: (r) => clockTime(r.startedAt) },
  { key: "mode", header: "Mode", render: (r) => <code>{r.report.mode}</code> },
  { key: "req", header: "Requests", render: (r) => r.report.requests },
  { key: "ok", header: "Sold", render: (r) => r.report.successes },
  { key: "over", header: "Oversold", render: (r) => r.report.oversold },
  { key: "low", header: "Lowest", render: (r) => signed(r.report.lowestStock) },
  { key: "p95", header: "p95", className: "hide-narrow", render: (r) => formatMs(r.report.latencyMs.p95) },
  { key: "dur", header: "Duration", className: "hide-narrow", render: (r) => formatMs(r.report.durationMs) },
  {
    key: "cmds",
    header: "Cmds/success",
    className: "hide-narrow",
    render: (r) =>
      r.report.redisCommandsPerSuccess === null ? "–" : r.report.redisCommandsPerSuccess.toFixed(1),
  },
  {
    key: "verdict",
    header: "Verdict",
    render: (r) => {
      const v = verdictOf(r.report);
      return <Badge tone={v.safe ? "ok" : "bad"}>{v.safe ? "safe" : "oversold"}</Badge>;
    },
  },
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
