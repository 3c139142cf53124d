import type { ReadWriteHold } from "@lockyard/api";
import { Badge } from "@lockyard/ui/badge";
import { IntervalTrack } from "@lockyard/ui/interval-track";
import { type Column, Table } from "@lockyard/ui/table";

const ms = (n: number) => `${Math.round(n)} ms`;

function columns(spanMs: number): Column<ReadWriteHold>[] {
  return [
    { key: "actor", header: "Holder", render: (h) => <strong>{h.actor}</strong> },
    {
      key: "mode",
      header: "Mode",
      render: (h) => <Badge tone={h.mode === "write" ? "warn" : "info"}>{h.mode}</Badge>,
    },
    {
      key: "waited",
      header: "Waited",
      className: "num",
      render: (h) => <span data-testid="rw-waited">{ms(h.acquiredMs - h.requestedMs)}</span>,
    },
    {
      key: "held",
      header: "Held",
      className: "num",
      render: (h) => (
        <span className="mono" data-testid="rw-held">
          {ms(h.acquiredMs)} – {ms(h.releasedMs)}
        </span>
      ),
    },
    {
      key: "bar",
      header: (
        <>
          Timeline <span className="muted">(0 – {ms(spanMs)})</span>
        </>
      ),
      className: "rw-bar-col",
      render: (h) => (
        <IntervalTrack
          spanMs={spanMs}
          testId="rw-track"
          segments={[
            { fromMs: h.requestedMs, toMs: h.acquiredMs, tone: "wait" },
            { fromMs: h.acquiredMs, toMs: h.releasedMs, tone: h.mode === "write" ? "warn" : "info" },
          ]}
        />
      ),
    },
  ];
}

/**
 * The read-write demo's holds as a chart: one row per holder, a hatched bar while it waited and a solid one
 * while it held the lock, on one time scale. The same times stand in the row as text.
 */
export function ReadWriteChart({
  holds,
  durationMs,
}: {
  holds: readonly ReadWriteHold[];
  durationMs: number;
}) {
  const spanMs = Math.max(durationMs, ...holds.map((h) => h.releasedMs));
  return (
    <>
      <Table
        testId="rw-chart"
        caption="Read-write demo: who held the lock, and when"
        columns={columns(spanMs)}
        rows={holds}
        rowKey={(h) => h.actor}
        rowAttrs={(h) => ({
          "data-testid": "rw-hold",
          "data-actor": h.actor,
          "data-mode": h.mode,
          "data-acquired-ms": h.acquiredMs,
          "data-released-ms": h.releasedMs,
        })}
        empty="No holds."
      />
      <p className="muted rw-legend">
        <span className="rw-key ly-track-wait" aria-hidden="true" /> waiting{" "}
        <span className="rw-key ly-track-info" aria-hidden="true" /> reading{" "}
        <span className="rw-key ly-track-warn" aria-hidden="true" /> writing
      </p>
    </>
  );
}
