"use client";

export interface NumberFieldProps {
  label: string;
  /** As typed: the form clamps it when it submits. */
  value: string;
  onChange: (value: string) => void;
  min: number;
  max: number;
  testId: string;
  readOnly: boolean;
}

/** A labelled number input of the burst form. */
export function NumberField({ label, value, onChange, min, max, testId, readOnly }: NumberFieldProps) {
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
      />
    </label>
  );
}
