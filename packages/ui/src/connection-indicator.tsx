/**
 * - `connecting`: no connection yet since the page loaded;
 * - `connected`: the live stream is up;
 * - `reconnecting`: it was up and was lost, retrying;
 * - `offline`: every API instance failed, still retrying in the background.
 */
export type ConnectionState = "connecting" | "connected" | "reconnecting" | "offline";

/** What the indicator shows: the stream's state, or `degraded` while the API is up but its Redis is not. */
export type IndicatorState = ConnectionState | "degraded";

export interface ConnectionIndicatorProps {
  state: IndicatorState;
  /** Where the live stream comes from (shown beside the state, not part of its name). */
  detail?: string;
  /** A sentence about a change, e.g. a failover, read out with the state. */
  note?: string;
  testId?: string;
}

export const CONNECTION_WORDS: Record<IndicatorState, string> = {
  connecting: "Connecting…",
  connected: "Live",
  reconnecting: "Reconnecting…",
  offline: "Offline",
  degraded: "API up, Redis unreachable",
};

export function ConnectionIndicator({ state, detail, note, testId }: ConnectionIndicatorProps) {
  return (
    <span className={`ly-conn ly-conn-${state}`} data-testid={testId} data-state={state} title={detail}>
      <span className="ly-conn-dot" aria-hidden="true" />
      <span role="status" className="ly-conn-state" data-testid={testId ? `${testId}-state` : undefined}>
        {CONNECTION_WORDS[state]}
        {note ? <span className="ly-sr-only">. {note}</span> : null}
      </span>
      {detail ? <span className="ly-conn-detail">{detail}</span> : null}
    </span>
  );
}
