"use client";

import { type FormEvent, useState } from "react";
import { readWholeNumber } from "~/lib/whole-number";
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

const LIMITS = {
  requests: { min: 1, max: 1000 },
  initialStock: { min: 0, max: 100_000 },
  workMs: { min: 0, max: 2000 },
} as const;
type Field = keyof typeof LIMITS;

/** The burst's settings (ModePicker, three NumberFields) and its Start button (BurstStart). */
export function BurstForm({ running, blockedReason = null, modes, onStart }: BurstFormProps) {
  const [mode, setMode] = useState<Mode>("redis");
  const [requests, setRequests] = useState("200");
  const [workMs, setWorkMs] = useState("10");
  const [initialStock, setInitialStock] = useState("100");
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const selectedUnavailable = modes?.find((x) => x.mode === mode)?.available === false;

  // Start stays focusable while busy (aria-disabled, not disabled), so focus never falls to <body>.
  const blocked = running || selectedUnavailable || blockedReason !== null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (blocked) return;
    const raw: Record<Field, string> = { requests, initialStock, workMs };
    const read = (f: Field) => readWholeNumber(raw[f], LIMITS[f].min, LIMITS[f].max);
    const [r, s, w] = [read("requests"), read("initialStock"), read("workMs")];
    setErrors({
      requests: r.ok ? undefined : r.message,
      initialStock: s.ok ? undefined : s.message,
      workMs: w.ok ? undefined : w.message,
    });
    if (!r.ok || !s.ok || !w.ok) return;
    onStart({ mode, requests: r.value, workMs: w.value, initialStock: s.value });
  };

  const fields = [
    {
      label: "Requests",
      ...LIMITS.requests,
      value: requests,
      onChange: setRequests,
      error: errors.requests,
      testId: "burst-requests",
    },
    {
      label: "Initial stock",
      ...LIMITS.initialStock,
      value: initialStock,
      onChange: setInitialStock,
      error: errors.initialStock,
      testId: "burst-stock",
    },
    {
      label: "Work per request (ms)",
      ...LIMITS.workMs,
      value: workMs,
      onChange: setWorkMs,
      error: errors.workMs,
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
