export interface ProgressBarProps {
  value: number;
  max: number;
  label?: string;
  testId?: string;
}

export function ProgressBar({ value, max, label, testId }: ProgressBarProps) {
  const pct = max > 0 ? Math.min(100, Math.max(0, (value / max) * 100)) : 0;
  return (
    <div className="ly-progress" data-testid={testId}>
      <div
        className="ly-progress-track"
        role="progressbar"
        aria-valuemin={0}
        aria-valuemax={max}
        aria-valuenow={value}
        aria-label={label ?? "progress"}
        aria-valuetext={`${value} of ${max}`}
      >
        <div className="ly-progress-fill" style={{ transform: `scaleX(${pct / 100})` }} />
      </div>
      <div className="ly-progress-text">
        {label ? `${label}: ` : ""}
        {value} / {max}
      </div>
    </div>
  );
}
