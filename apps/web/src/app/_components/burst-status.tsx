import { BurstVerdict } from "./burst-verdict";
import type { BurstReport, BurstState } from "./use-burst";

export interface BurstStatusProps {
  running: boolean;
  progress: BurstState["progress"];
  report: BurstReport | null;
}

/** Quarter milestones, so a screen reader hears the run advance without a message per request. */
function milestone(p: NonNullable<BurstState["progress"]>): string {
  if (p.done === 0) return `Flash sale started: ${p.total} requests.`;
  const quarter = Math.min(3, Math.floor((p.done / Math.max(1, p.total)) * 4));
  return quarter === 0 ? `Flash sale running: ${p.total} requests.` : `Flash sale ${quarter * 25}% done.`;
}

/**
 * One live region, always mounted: its text changes from the run's milestones to the verdict, so
 * screen readers announce the verdict instead of skipping a region that appeared with its text inside.
 */
export function BurstStatus({ running, progress, report }: BurstStatusProps) {
  return (
    <div role="status" className="burst-status" data-testid="burst-status">
      {running && progress ? <span className="ly-sr-only">{milestone(progress)}</span> : null}
      {!running && report ? <BurstVerdict report={report} /> : null}
    </div>
  );
}
