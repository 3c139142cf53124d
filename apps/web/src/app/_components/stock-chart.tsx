"use client";

import { CartesianGrid, Line, LineChart, ReferenceLine, Tooltip, XAxis, YAxis } from "recharts";
import type { StockPoint } from "./use-burst";

/** Stock over time during a run; the zero line makes an oversell visible as the curve dips under it. */
export function StockChart({ series }: { series: readonly StockPoint[] }) {
  const min = Math.min(0, ...series.map((p) => p.stock));
  return (
    <div className="chart" data-testid="stock-chart" data-points={series.length}>
      <LineChart
        responsive
        style={{ width: "100%", height: 220 }}
        data={[...series]}
        margin={{ top: 8, right: 12, bottom: 4, left: -8 }}
      >
        <CartesianGrid strokeDasharray="3 3" stroke="var(--ly-border)" />
        <XAxis
          dataKey="t"
          type="number"
          domain={[0, "dataMax"]}
          tickFormatter={(t: number) => `${t.toFixed(1)}s`}
          stroke="var(--ly-muted)"
          fontSize={12}
        />
        <YAxis domain={[min, "auto"]} allowDecimals={false} stroke="var(--ly-muted)" fontSize={12} />
        <ReferenceLine y={0} stroke="var(--ly-bad)" strokeDasharray="4 2" />
        <Tooltip
          formatter={(v) => [v, "stock"]}
          labelFormatter={(t) => `${Number(t).toFixed(2)} s`}
          contentStyle={{ background: "var(--ly-surface)", border: "1px solid var(--ly-border)" }}
        />
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
  );
}
