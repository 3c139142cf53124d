"use client";

import type { RouterOutputs } from "@lockyard/api";
import { type FormEvent, useState } from "react";
import { MODES } from "./modes";
import type { BurstInput, Mode } from "./use-burst";

type ModeInfo = RouterOutputs["system"]["info"]["modes"][number];

export interface BurstFormProps {
  running: boolean;
  /** Why Start cannot run now (the APIs are unreachable), shown beside it. */
  blockedReason?: string | null;
  modes: readonly ModeInfo[] | undefined;
  onStart: (input: BurstInput) => void;
}

function clampInt(raw: string, min: number, max: number, fallback: number): number {
  const n = Number.parseInt(raw, 10);
  if (!Number.isFinite(n)) return fallback;
  return Math.min(max, Math.max(min, n));
}

export function BurstForm({ running, blockedReason = null, modes, onStart }: BurstFormProps) {
  const [mode, setMode] = useState<Mode>("redis");
  const [requests, setRequests] = useState("200");
  const [workMs, setWorkMs] = useState("10");
  const [initialStock, setInitialStock] = useState("100");
  const availability = (m: Mode) => modes?.find((x) => x.mode === m);
  const selectedUnavailable = availability(mode)?.available === false;

  // Start stays focusable while busy (aria-disabled, not disabled), so focus never falls to <body>.
  const blocked = running || selectedUnavailable || blockedReason !== null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (blocked) return;
    onStart({
      mode,
      requests: clampInt(requests, 1, 1000, 200),
      workMs: clampInt(workMs, 0, 2000, 10),
      initialStock: clampInt(initialStock, 0, 100_000, 100),
    });
  };

  return (
    <form className="burst-form" onSubmit={submit} data-testid="burst-form">
      <fieldset className="modes" disabled={running}>
        <legend>Mode</legend>
        {MODES.map((m) => {
          const info = availability(m.mode);
          const unavailable = info?.available === false;
          return (
            <label
              key={m.mode}
              className={`mode ${mode === m.mode ? "mode-selected" : ""} ${unavailable ? "mode-disabled" : ""}`}
              data-testid={`mode-${m.mode}`}
              data-available={unavailable ? "false" : "true"}
            >
              <input
                type="radio"
                name="mode"
                value={m.mode}
                checked={mode === m.mode}
                disabled={unavailable}
                onChange={() => setMode(m.mode)}
              />
              <span className="mode-title">
                {m.title} <code>{m.mode}</code>
              </span>
              <span className="mode-explain">{m.explain}</span>
              {unavailable ? (
                <span className="mode-reason" data-testid={`mode-${m.mode}-reason`}>
                  Unavailable: {info?.reason ?? "not configured"}
                </span>
              ) : null}
            </label>
          );
        })}
      </fieldset>
      <div className="burst-inputs">
        <label className="field">
          <span>Requests</span>
          <input
            className="input"
            type="number"
            min={1}
            max={1000}
            value={requests}
            onChange={(e) => setRequests(e.target.value)}
            data-testid="burst-requests"
            readOnly={running}
          />
        </label>
        <label className="field">
          <span>Initial stock</span>
          <input
            className="input"
            type="number"
            min={0}
            max={100000}
            value={initialStock}
            onChange={(e) => setInitialStock(e.target.value)}
            data-testid="burst-stock"
            readOnly={running}
          />
        </label>
        <label className="field">
          <span>Work per request (ms)</span>
          <input
            className="input"
            type="number"
            min={0}
            max={2000}
            value={workMs}
            onChange={(e) => setWorkMs(e.target.value)}
            data-testid="burst-work"
            readOnly={running}
          />
        </label>
        <button
          type="submit"
          className="button primary"
          aria-disabled={blocked}
          aria-describedby={blockedReason ? "burst-blocked" : undefined}
          data-testid="burst-start"
        >
          {running ? "Running…" : "Start"}
        </button>
        {blockedReason ? (
          <span id="burst-blocked" className="blocked-reason" data-testid="burst-blocked">
            {blockedReason}
          </span>
        ) : null}
      </div>
    </form>
  );
}
