"use client";

import { Badge } from "@lockyard/ui/badge";
import { Panel } from "@lockyard/ui/panel";
import { useMemo, useState } from "react";
import { ErrorMessage } from "./error-message";
import { useLiveLocks } from "./live-locks";
import { LockTable } from "./lock-table";

export function LocksPanel() {
  const live = useLiveLocks();
  const [filter, setFilter] = useState("");
  const needle = filter.trim().toLowerCase();
  const locks = useMemo(
    () => (needle ? live.locks.filter((l) => l.resource.toLowerCase().includes(needle)) : live.locks),
    [live.locks, needle],
  );
  return (
    <Panel
      id="locks"
      testId="panel-locks"
      title="Locks"
      subtitle={
        <>
          Every <code>lock:*</code> key in Redis, live. The bar counts the lease down; a watchdog renewal
          makes it jump back.
        </>
      }
      actions={
        <>
          <Badge tone="info" testId="lock-count">
            {locks.length} held
          </Badge>
          <input
            type="search"
            className="input"
            placeholder="Filter by resource"
            aria-label="Filter locks by resource"
            value={filter}
            onChange={(e) => setFilter(e.target.value)}
            data-testid="lock-filter"
          />
        </>
      }
    >
      <ErrorMessage error={live.error} testId="locks-error" />
      <LockTable
        key={needle}
        stale={live.connection !== "connected"}
        testId="lock-table"
        locks={locks}
        receivedAt={live.receivedAt}
        empty={
          live.connection === "connected"
            ? needle
              ? `No lock matches “${filter.trim()}”.`
              : "No locks are held right now. Start a flash sale or a scenario to see some."
            : "Waiting for the live stream…"
        }
      />
    </Panel>
  );
}
