"use client";

import { type FormEvent, useState } from "react";
import { BurstStart } from "./burst-start";
import { type ModeInfo, ModePicker } from "./mode-picker";
import { NumberField } from "./number-field";
import type { BurstInput, Mode } from "./use-burst";

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

/** The burst's settings (ModePicker, three NumberFields) and its Start button (BurstStart). */
export function BurstForm({ running, blockedReason = null, modes, onStart }: BurstFormProps) {
  const [mode, setMode] = useState<Mode>("redis");
  const [requests, setRequests] = useState("200");
  const [workMs, setWorkMs] = useState("10");
  const [initialStock, setInitialStock] = useState("100");
  const selectedUnavailable = modes?.find((x) => x.mode === mode)?.available === false;

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

  const fields = [
    {
      label: "Requests",
      min: 1,
      max: 1000,
      value: requests,
      onChange: setRequests,
      testId: "burst-requests",
    },
    {
      label: "Initial stock",
      min: 0,
      max: 100000,
      value: initialStock,
      onChange: setInitialStock,
      testId: "burst-stock",
    },
    {
      label: "Work per request (ms)",
      min: 0,
      max: 2000,
      value: workMs,
      onChange: setWorkMs,
      testId: "burst-work",
    },
  ];

  return (
    <form className="burst-form" onSubmit={submit} data-testid="burst-form">
      <ModePicker mode={mode} onChange={setMode} modes={modes} disabled={running} />
      <div className="burst-inputs">
        {fields.map((f) => (
          <NumberField key={f.testId} {...f} readOnly={running} />
        ))}
        <BurstStart running={running} blocked={blocked} blockedReason={blockedReason} />
      </div>
    </form>
  );
}
