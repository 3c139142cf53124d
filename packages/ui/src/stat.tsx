import type { ReactNode } from "react";
import type { Tone } from "./badge.js";

export interface StatProps {
  label: string;
  value: ReactNode;
  hint?: ReactNode;
  tone?: Tone;
  testId?: string;
}

/** A labelled figure. `data-value` carries the raw value so tests need not parse formatted text. */
export function Stat({ label, value, hint, tone = "neutral", testId }: StatProps) {
  return (
    <div
      className={`ly-stat ly-tone-${tone}`}
      data-testid={testId}
      data-value={typeof value === "number" || typeof value === "string" ? value : undefined}
    >
      <div className="ly-stat-label">{label}</div>
      <div className="ly-stat-value">{value}</div>
      {hint === undefined ? null : <div className="ly-stat-hint">{hint}</div>}
    </div>
  );
}
