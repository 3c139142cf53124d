"use client";

import { Badge } from "@lockyard/ui/badge";
import { Panel } from "@lockyard/ui/panel";
import { useMemo, useState } from "react";
import { ErrorMessage } from "./error-message";
import { useLiveLocks } from "./live-locks";
import { LockTable } from "./lock-table";
import { ScenarioTimeline } from "./scenario-timeline";
import { type ScenarioName, useScenario } from "./use-scenario";

const SCENARIOS: readonly { name: ScenarioName; title: string; explain: string }[] = [
  { name: "watchdog", title: "Watchdog", explain: "Work outlasts the lease; renewals keep the lock alive." },
  {
    name: "reentrancy",
    title: "Re-entrancy",
    explain: "The same owner takes the lock again; the count rises and falls.",
  },
  {
    name: "misdelete",
    title: "Mis-delete",
    explain: "A slow client's lease expires; its release must not free the new owner's lock.",
  },
  {
    name: "fencing",
    title: "Fencing",
    explain: "A paused holder wakes with a stale token; the fenced write refuses it.",
  },
  { name: "crash", title: "Crash", explain: "The holder dies without releasing; the lease frees the lock." },
];

export function ScenariosPanel() {
  const live = useLiveLocks();
  const { state, start } = useScenario();
  const [fast, setFast] = useState(false);
  const running = state.status === "running";
  const touched = useMemo(
    () => new Set(state.steps.flatMap((s) => s.locks.map((l) => l.resource))),
    [state.steps],
  );
  const locks = touched.size > 0 ? live.locks.filter((l) => touched.has(l.resource)) : live.locks;

  return (
    <Panel
      id="scenarios"
      testId="panel-scenarios"
      title="Scenarios"
      subtitle="Scripted runs of the classic lock failures, told step by step beside the live locks."
      actions={
        <label className="check">
          <input
            type="checkbox"
            checked={fast}
            onChange={(e) => setFast(e.target.checked)}
            data-testid="scenario-fast"
          />
          Fast (¼ time)
        </label>
      }
    >
      <div className="scenario-buttons">
        {SCENARIOS.map((s) => (
          <button
            key={s.name}
            type="button"
            className={`button ${state.name === s.name ? "primary" : ""}`}
            // aria-disabled, not disabled: the pressed button keeps focus while the scenario runs.
            aria-disabled={running}
            aria-pressed={state.name === s.name}
            title={s.explain}
            onClick={() => running || start({ name: s.name, timeScale: fast ? 0.25 : 1 })}
            data-testid={`scenario-${s.name}`}
          >
            {s.title}
          </button>
        ))}
      </div>
      {state.name ? (
        <p className="muted scenario-explain">{SCENARIOS.find((s) => s.name === state.name)?.explain}</p>
      ) : null}
      <ErrorMessage error={state.error} testId="scenario-error" />
      <div role="status" data-testid="scenario-result">
        {running && state.name ? <span className="ly-sr-only">Scenario {state.name} running.</span> : null}
        {state.done ? (
          <p className="summary" data-testid="scenario-done" data-ok={state.done.ok ? "true" : "false"}>
            <Badge tone={state.done.ok ? "ok" : "bad"}>{state.done.ok ? "as expected" : "unexpected"}</Badge>{" "}
            {state.done.summary}
          </p>
        ) : null}
      </div>
      <div className="split">
        <div className="split-main" data-testid="scenario-status" data-status={state.status}>
          <h3 className="h3">Timeline {state.name ? <code>{state.name}</code> : null}</h3>
          <ScenarioTimeline steps={state.steps} />
        </div>
        <div className="split-side">
          <h3 className="h3">Live locks{touched.size > 0 ? " in this scenario" : ""}</h3>
          <LockTable
            key={touched.size > 0 ? "scenario" : "all"}
            stale={live.connection !== "connected"}
            testId="scenario-locks"
            caption={touched.size > 0 ? "Locks of this scenario" : "Locks currently held"}
            locks={locks}
            empty={touched.size > 0 ? "None of this scenario's locks is held now." : "No locks are held."}
          />
        </div>
      </div>
    </Panel>
  );
}
