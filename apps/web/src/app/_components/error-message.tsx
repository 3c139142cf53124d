"use client";

import { useRef } from "react";
import { describeError } from "~/lib/errors";
import { useLiveConnection } from "./live-locks";

/**
 * A typed error in words. While the APIs are unreachable the header's "Offline" / "Reconnecting…" says
 * so once, so "cannot reach the API" errors are not repeated in every panel; and an error that arose
 * during an outage is cleared when the connection comes back.
 */
export function ErrorMessage({ error, testId }: { error: unknown; testId?: string }) {
  const { state } = useLiveConnection();
  const duringOutage = useRef(new WeakSet<object>());
  if (error === null || error === undefined) return null;
  const outage = state !== "connected";
  const key = typeof error === "object" ? error : null;
  if (outage && key) duringOutage.current.add(key);
  const { code, text } = describeError(error);
  if (outage && code === "NETWORK") return null;
  if (!outage && key && duringOutage.current.has(key)) return null;
  return (
    <p className="error" role="alert" data-testid={testId} data-code={code}>
      <strong>{code}</strong> {text}
    </p>
  );
}
