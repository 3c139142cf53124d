import type { Tone } from "./badge.js";

export interface TrackSegment {
  fromMs: number;
  toMs: number;
  /** A tone for a hold; `wait` (hatched, no fill) for time spent waiting. */
  tone: Tone | "wait";
}

export interface IntervalTrackProps {
  segments: readonly TrackSegment[];
  /** The time the whole track stands for: segments are placed at fromMs / spanMs of its width. */
  spanMs: number;
  testId?: string;
}

const pct = (ms: number, spanMs: number) => `${Math.min(100, Math.max(0, (ms / spanMs) * 100))}%`;

/**
 * One lane of a timeline chart: bars placed by time on a shared scale. It is a picture only (hidden from
 * assistive technology): the table row it sits in must state the same times in text.
 */
export function IntervalTrack({ segments, spanMs, testId }: IntervalTrackProps) {
  const span = spanMs > 0 ? spanMs : 1;
  return (
    <div className="ly-track" aria-hidden="true" data-testid={testId}>
      {segments.map((s) => (
        <span
          key={`${s.tone}-${s.fromMs}`}
          className={`ly-track-seg ly-track-${s.tone}`}
          style={{ left: pct(s.fromMs, span), width: pct(Math.max(0, s.toMs - s.fromMs), span) }}
          data-tone={s.tone}
          data-from-ms={Math.round(s.fromMs)}
          data-to-ms={Math.round(s.toMs)}
        />
      ))}
    </div>
  );
}
