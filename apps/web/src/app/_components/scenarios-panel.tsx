"use client";

import { Badge } from "@lockyard/ui/badge";
import { Panel } from "@lockyard/ui/panel";
import { useMemo, useState } from "react";
import { ErrorMessage } from "./error-message";
import { useLiveConnection, useLiveLocks } from "./live-locks";
import { LockTable } from "./lock-table";
import { ReadWriteChart } from "./read-write-chart";
import { ReadWriteVerdict } from "./read-write-verdict";
import { ScenarioTimeline } from "./scenario-timeline";
import { useDashboardHealth } from "./use-dashboard-health";
import { useReadWriteDemo } from "./use-read-write-demo";
import { type ScenarioName, useScenario } from "./use-scenario";

const READ_WRITE = {
  title: "Read-write",
  explain: "Readers share the lock; a writer waits for them and keeps new readers out until it is done.",
};
/** The demo's lock is `demo:read-write:<runId>`: its run id is known only once it answers. */
const READ_WRITE_PREFIX = "demo:read-write:";

const OFFLINE_REASON = "Both API instances are unreachable: scenarios run again when one answers.";
const BLOCKED_ID = "scenario-blocked";

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
  const rw = useReadWriteDemo();
  const [readWrite, setReadWrite] = useState(false);
  const [fast, setFast] = useState(false);
  const running = state.status === "running" || rw.state.status === "running";
  const offline = useLiveConnection().state === "offline";
  const { stale } = useDashboardHealth();
  const blockedReason = offline && !running ? OFFLINE_REASON : null;
  const blocked = running || blockedReason !== null;
  const describedBy = blockedReason ? BLOCKED_ID : undefined;
  const touched = useMemo(
    () => new Set(state.steps.flatMap((s) => s.locks.map((l) => l.resource))),
    [state.steps],
  );
  const rwPrefix = rw.state.result?.resource ?? READ_WRITE_PREFIX;
  const mine = readWrite
    ? (l: { resource: string }) => l.resource.startsWith(rwPrefix)
    : touched.size > 0
      ? (l: { resource: string }) => touched.has(l.resource)
      : null;
  const locks = mine ? live.locks.filter(mine) : live.locks;
  const explain = readWrite ? READ_WRITE.explain : SCENARIOS.find((s) => s.name === state.name)?.explain;

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
            className={`button ${!readWrite && state.name === s.name ? "primary" : ""}`}
            // aria-disabled, not disabled: the pressed button keeps focus while the scenario runs.
            aria-disabled={blocked}
            aria-describedby={describedBy}
            aria-pressed={!readWrite && state.name === s.name}
            title={s.explain}
            onClick={() => {
              if (blocked) return;
              setReadWrite(false);
              start({ name: s.name, timeScale: fast ? 0.25 : 1 });
            }}
            data-testid={`scenario-${s.name}`}
          >
            {s.title}
          </button>
        ))}
        <button
          type="button"
          className={`button ${readWrite ? "primary" : ""}`}
          aria-disabled={blocked}
          aria-describedby={describedBy}
          aria-pressed={readWrite}
          title={READ_WRITE.explain}
          onClick={() => {
            if (blocked) return;
            setReadWrite(true);
            rw.run(fast ? 0.25 : 1);
          }}
          data-testid="scenario-read-write"
        >
          {READ_WRITE.title}
        </button>
        {blockedReason ? (
          <span id={BLOCKED_ID} className="blocked-reason" data-testid={BLOCKED_ID}>
            {blockedReason}
          </span>
        ) : null}
      </div>
      {explain ? <p className="muted scenario-explain">{explain}</p> : null}
      <ErrorMessage error={readWrite ? rw.state.error : state.error} testId="scenario-error" />
      <div role="status" data-testid="scenario-result">
        {running ? (
          <span className="ly-sr-only">
            {readWrite ? "Read-write demo" : `Scenario ${state.name}`} running.
          </span>
        ) : null}
        {readWrite && rw.state.result ? <ReadWriteVerdict verdict={rw.state.result.verdict} /> : null}
        {!readWrite && state.done ? (
          <p className="summary" data-testid="scenario-done" data-ok={state.done.ok ? "true" : "false"}>
            <Badge tone={state.done.ok ? "ok" : "bad"}>{state.done.ok ? "as expected" : "unexpected"}</Badge>{" "}
            {state.done.summary}
          </p>
        ) : null}
      </div>
      <div className="split">
        <div
          className="split-main"
          data-testid="scenario-status"
          data-status={readWrite ? rw.state.status : state.status}
        >
          <h3 className="h3">
            Timeline {readWrite ? <code>read-write</code> : state.name ? <code>{state.name}</code> : null}
          </h3>
          {readWrite ? (
            rw.state.result ? (
              <ReadWriteChart holds={rw.state.result.holds} durationMs={rw.state.result.durationMs} />
            ) : (
              <p className="muted">
                {rw.state.status === "running"
                  ? "Readers and a writer are taking turns; the chart appears when they are done."
                  : "No holds to show."}
              </p>
            )
          ) : (
            <ScenarioTimeline steps={state.steps} />
          )}
        </div>
        <div className="split-side">
          <h3 className="h3">Live locks{mine ? " in this scenario" : ""}</h3>
          <LockTable
            key={readWrite ? "read-write" : touched.size > 0 ? "scenario" : "all"}
            stale={stale}
            testId="scenario-locks"
            caption={mine ? "Locks of this scenario" : "Locks currently held"}
            locks={locks}
            empty={mine ? "None of this scenario's locks is held now." : "No locks are held."}
          />
        </div>
      </div>
    </Panel>
  );
}
