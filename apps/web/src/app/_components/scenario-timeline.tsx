import { Badge, type Tone } from "@lockyard/ui/badge";
import { formatMs } from "~/lib/format";
import type { ScenarioStep } from "./use-scenario";

const tones: Partial<Record<ScenarioStep["kind"], Tone>> = {
  acquired: "ok",
  released: "info",
  renewed: "info",
  waiting: "neutral",
  rejected: "warn",
  expired: "warn",
  killed: "bad",
  error: "bad",
  write: "neutral",
};

export function ScenarioTimeline({ steps }: { steps: readonly ScenarioStep[] }) {
  if (steps.length === 0)
    return <p className="muted">Pick a scenario; its events appear here as they happen.</p>;
  return (
    // A scrolling list: focusable and named, so keyboard users can scroll it.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard.
    <ol className="timeline" data-testid="scenario-timeline" tabIndex={0} aria-label="Scenario timeline">
      {steps.map((s) => (
        <li key={s.seq} className="timeline-item" data-testid="scenario-step" data-kind={s.kind}>
          <span className="timeline-time mono">{formatMs(s.elapsedMs)}</span>
          <Badge tone={tones[s.kind] ?? "neutral"}>{s.kind}</Badge>
          <span className="timeline-actor">{s.actor}</span>
          <span className="timeline-msg">{s.message}</span>
        </li>
      ))}
    </ol>
  );
}
