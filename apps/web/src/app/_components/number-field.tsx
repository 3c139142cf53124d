"use client";

import { useId } from "react";

export interface NumberFieldProps {
  label: string;
  /** As typed: the form reads it (readWholeNumber) when it submits. */
  value: string;
  onChange: (value: string) => void;
  min: number;
  max: number;
  testId: string;
  readOnly: boolean;
  /** Why the value cannot be used, shown under the field and tied to it. */
  error?: string | null;
}

/** A labelled number input of the burst form. */
export function NumberField({
  label,
  value,
  onChange,
  min,
  max,
  testId,
  readOnly,
  error = null,
}: NumberFieldProps) {
  const errorId = useId();
  return (
    <label className="field">
      <span>{label}</span>
      <input
        className="input"
        type="number"
        min={min}
        max={max}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        data-testid={testId}
        readOnly={readOnly}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? errorId : undefined}
      />
      {error ? (
        <span className="field-error" id={errorId} role="alert" data-testid={`${testId}-error`}>
          {error}
        </span>
      ) : null}
    </label>
  );
}
