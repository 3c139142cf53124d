"use client";

import {
  CartesianGrid,
  Line,
  LineChart,
  ReferenceLine,
  Tooltip,
  type TooltipContentProps,
  XAxis,
  YAxis,
} from "recharts";
import { formatSeconds, signed } from "~/lib/format";
import type { StockPoint } from "./use-burst";

/** The series in one sentence: the chart's text alternative. */
export function describeSeries(series: readonly StockPoint[], finished: boolean): string {
  const first = series[0];
  const last = series[series.length - 1];
  if (!first || !last || series.length < 2) return "No stock changes yet.";
  const lowest = Math.min(...series.map((p) => p.stock));
  const verb = finished ? "fell" : "has fallen";
  const moved =
    last.stock === first.stock
      ? `Stock stayed at ${signed(first.stock)} for ${formatSeconds(last.t * 1000)}`
      : `Stock ${verb} from ${signed(first.stock)} to ${signed(last.stock)} in ${formatSeconds(last.t * 1000)}`;
  return lowest < 0 ? `${moved}, lowest ${signed(lowest)}: below zero.` : `${moved}, never below 0.`;
}

/** The hover/keyboard tooltip: a polite status, never an assertive interruption. */
function ChartTooltip({ active, payload, label }: Partial<TooltipContentProps<number, string>>) {
  if (!active || !payload?.length) return null;
  return (
    <div className="chart-tooltip" role="status">
      {formatSeconds(Number(label) * 1000)}: stock {signed(Number(payload[0]?.value))}
    </div>
  );
}

/** Stock over time during a run; the zero line makes an oversell visible as the curve dips under it. */
export function StockChart({ series, finished }: { series: readonly StockPoint[]; finished: boolean }) {
  const min = Math.min(0, ...series.map((p) => p.stock));
  const summary = describeSeries(series, finished);
  return (
    <figure className="chart" data-testid="stock-chart" data-points={series.length}>
      <div className="chart-plot" aria-hidden="true">
        <LineChart
          responsive
          style={{ width: "100%", height: 220 }}
          data={[...series]}
          margin={{ top: 8, right: 12, bottom: 18, left: 8 }}
          accessibilityLayer={false}
        >
          <CartesianGrid strokeDasharray="3 3" stroke="var(--ly-border)" />
          <XAxis
            dataKey="t"
            type="number"
            domain={[0, "dataMax"]}
            tickFormatter={(t: number) => t.toFixed(1)}
            stroke="var(--ly-muted)"
            fontSize={12}
            label={{
              value: "time, s",
              position: "insideBottom",
              offset: -12,
              fill: "var(--ly-muted)",
              fontSize: 12,
            }}
          />
          <YAxis
            domain={[min, "auto"]}
            allowDecimals={false}
            stroke="var(--ly-muted)"
            fontSize={12}
            width={44}
            label={{
              value: "stock, units",
              angle: -90,
              position: "insideLeft",
              offset: 0,
              fill: "var(--ly-muted)",
              fontSize: 12,
              style: { textAnchor: "middle" },
            }}
          />
          <ReferenceLine y={0} stroke="var(--ly-bad)" strokeDasharray="4 2" />
          <Tooltip content={<ChartTooltip />} isAnimationActive={false} />
          <Line
            type="stepAfter"
            dataKey="stock"
            stroke="var(--ly-accent)"
            strokeWidth={2}
            dot={false}
            isAnimationActive={false}
          />
        </LineChart>
      </div>
      <figcaption className="chart-caption" data-testid="stock-chart-summary">
        <span className="ly-sr-only">Chart of stock (units) over time (s). </span>
        {summary}
      </figcaption>
    </figure>
  );
}
