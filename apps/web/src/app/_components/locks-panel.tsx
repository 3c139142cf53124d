"use client";

import { Badge } from "@lockyard/ui/badge";
import { Panel } from "@lockyard/ui/panel";
import { useMemo, useState } from "react";
import { useLiveLocks } from "./live-locks";
import { LockTable } from "./lock-table";
import { useDashboardHealth } from "./use-dashboard-health";

const count = new Intl.NumberFormat("en");

export function LocksPanel() {
  const live = useLiveLocks();
  const [filter, setFilter] = useState("");
  const needle = filter.trim().toLowerCase();
  const locks = useMemo(
    () => (needle ? live.locks.filter((l) => l.resource.toLowerCase().includes(needle)) : live.locks),
    [live.locks, needle],
  );
  // While the live stream or Redis is down the panel shows the last known state, dimmed as a whole.
  const { stale } = useDashboardHealth();
  return (
    <Panel
      id="locks"
      testId="panel-locks"
      className={stale ? "stale" : undefined}
      title="Locks"
      subtitle={
        <>
          Every <code>lock:*</code> key in Redis, live. The bar counts the lease down; a watchdog renewal
          makes it jump back.
        </>
      }
      actions={
        <>
          <Badge tone={stale ? "neutral" : "info"} testId="lock-count">
            {needle
              ? `${count.format(locks.length)} of ${count.format(live.locks.length)}`
              : count.format(locks.length)}{" "}
            held{stale ? " (last known)" : ""}
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
      <LockTable
        key={needle}
        stale={stale}
        testId="lock-table"
        caption="Locks currently held"
        locks={locks}
        empty={
          !stale
            ? needle
              ? `No lock matches “${filter.trim()}”.`
              : "No locks are held right now. Start a flash sale or a scenario to see some."
            : live.connection === "connected"
              ? "Redis is unreachable: waiting for it to answer again…"
              : "Waiting for the live stream…"
        }
      />
    </Panel>
  );
}
