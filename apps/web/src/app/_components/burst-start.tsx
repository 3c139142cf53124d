"use client";

export interface BurstStartProps {
  running: boolean;
  blocked: boolean;
  /** Why Start cannot run now, shown beside it. */
  blockedReason: string | null;
}

/** Start stays focusable while busy (aria-disabled, not disabled), so focus never falls to <body>. */
export function BurstStart({ running, blocked, blockedReason }: BurstStartProps) {
  return (
    <>
      <button
        type="submit"
        className="button primary"
        aria-disabled={blocked}
        aria-describedby={blockedReason ? "burst-blocked" : undefined}
        data-testid="burst-start"
      >
        {running ? "Running…" : "Start"}
      </button>
      {blockedReason ? (
        <span id="burst-blocked" className="blocked-reason" data-testid="burst-blocked">
          {blockedReason}
        </span>
      ) : null}
    </>
  );
}
