export type ConnectionState = "connected" | "connecting" | "offline";

export interface ConnectionIndicatorProps {
  state: ConnectionState;
  detail?: string;
  testId?: string;
}

const words: Record<ConnectionState, string> = {
  connected: "Live",
  connecting: "Reconnecting…",
  offline: "Offline",
};

export function ConnectionIndicator({ state, detail, testId }: ConnectionIndicatorProps) {
  return (
    <span
      className={`ly-conn ly-conn-${state}`}
      data-testid={testId}
      data-state={state}
      role="status"
      aria-live="polite"
      title={detail}
    >
      <span className="ly-conn-dot" aria-hidden="true" />
      {words[state]}
      {detail ? <span className="ly-conn-detail">{detail}</span> : null}
    </span>
  );
}
