"use client";

import type { RouterOutputs } from "@lockyard/api";
import { MODES } from "./modes";
import type { Mode } from "./use-burst";

export type ModeInfo = RouterOutputs["system"]["info"]["modes"][number];

export interface ModePickerProps {
  mode: Mode;
  onChange: (mode: Mode) => void;
  /** Undefined until system.info answered: every mode counts as available meanwhile. */
  modes: readonly ModeInfo[] | undefined;
  disabled: boolean;
}

/** The burst's modes as radio cards, each with its explanation, and the reason when it is unavailable. */
export function ModePicker({ mode, onChange, modes, disabled }: ModePickerProps) {
  return (
    <fieldset className="modes" disabled={disabled}>
      <legend>Mode</legend>
      {MODES.map((m) => {
        const info = modes?.find((x) => x.mode === m.mode);
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
              onChange={() => onChange(m.mode)}
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
  );
}
