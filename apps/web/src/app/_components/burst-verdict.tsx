import { failedRequestsNote } from "~/lib/burst-errors";
import { signed } from "~/lib/format";
import type { BurstReport } from "./use-burst";

export function verdictOf(r: BurstReport): { safe: boolean; text: string } {
  if (r.oversold > 0)
    return { safe: false, text: `Oversold by ${r.oversold} (lowest stock ${signed(r.lowestStock)})` };
  if (r.lowestStock < 0)
    return { safe: false, text: `Stock dropped below zero (lowest stock ${signed(r.lowestStock)})` };
  return { safe: true, text: "Stock never dropped below zero" };
}

export function BurstVerdict({ report }: { report: BurstReport }) {
  const v = verdictOf(report);
  const failed = failedRequestsNote(report);
  return (
    <div
      className={`verdict ${v.safe ? "verdict-safe" : "verdict-unsafe"}`}
      data-testid="burst-verdict"
      data-safe={v.safe ? "true" : "false"}
      data-oversold={report.oversold}
      data-lowest={report.lowestStock}
    >
      <span className="verdict-icon" aria-hidden="true">
        {v.safe ? "✓" : "✗"}
      </span>
      <span>
        {v.text}
        <span className="verdict-mode">
          {" "}
          — mode <code>{report.mode}</code>
        </span>
        {failed ? (
          <span className="verdict-errors" data-testid="burst-verdict-errors">
            {" "}
            · {failed}
          </span>
        ) : null}
      </span>
    </div>
  );
}
