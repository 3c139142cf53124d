/**
 * - `connecting`: no connection yet since the page loaded;
 * - `connected`: the live stream is up;
 * - `reconnecting`: it was up and was lost, retrying;
 * - `offline`: every API instance failed, still retrying in the background.
 */
export type ConnectionState = "connecting" | "connected" | "reconnecting" | "offline";

export interface ConnectionIndicatorProps {
  state: ConnectionState;
  /** Where the live stream comes from (shown beside the state, not part of its name). */
  detail?: string;
  /** A sentence about a change, e.g. a failover, read out with the state. */
  note?: string;
  testId?: string;
}

export const CONNECTION_WORDS: Record<ConnectionState, string> = {
  connecting: "Connecting…",
  connected: "Live",
  reconnecting: "Reconnecting…",
  offline: "Offline",
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
