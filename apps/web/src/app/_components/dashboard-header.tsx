"use client";

import { ConnectionIndicator } from "@lockyard/ui/connection-indicator";
import { ApiDocsLink } from "./api-docs-link";
import { useLiveConnection } from "./live-locks";
import { useDashboardHealth } from "./use-dashboard-health";
import { useSystemInfo } from "./use-system-info";

const SECTIONS = [
  ["flash-sale", "Flash sale"],
  ["locks", "Locks"],
  ["orders", "Orders"],
  ["scenarios", "Scenarios"],
  ["jobs", "Jobs"],
] as const;

/** "single", "cluster · 3 masters, 3 replicas" or "sentinel · 1 replica": the topology the API instances run on. */
function topology(redis: {
  mode: "standalone" | "cluster" | "sentinel";
  masters?: number;
  replicas?: number;
}): string {
  const n = (count: number | undefined, word: string) => `${count ?? 0} ${word}${count === 1 ? "" : "s"}`;
  if (redis.mode === "sentinel") return `sentinel · ${n(redis.replicas, "replica")}`;
  if (redis.mode !== "cluster") return "single";
  return `cluster · ${n(redis.masters, "master")}, ${n(redis.replicas, "replica")}`;
}

/** "Redis 7.0.15", or "Redis unreachable" while the API cannot reach it (its version is then unknown). */
function redisLabel(redis: { version: string | null; reachable: boolean }): string {
  if (!redis.reachable) return "Redis unreachable";
  return redis.version ? `Redis ${redis.version}` : "Redis";
}

export function DashboardHeader() {
  const conn = useLiveConnection();
  const health = useDashboardHealth();
  const info = useSystemInfo();
  const note = health.advice ?? conn.note;
  return (
    <header className="top">
      <div className="brand">
        <span className="logo" aria-hidden="true">
          ⬢
        </span>
        <div>
          <h1>Lockyard</h1>
          <p className="muted tagline">Distributed locks on Redis, live.</p>
        </div>
      </div>
      <nav className="nav" aria-label="Sections">
        {SECTIONS.map(([id, label]) => (
          <a key={id} href={`#${id}`}>
            {label}
          </a>
        ))}
        <ApiDocsLink />
      </nav>
      <div className="top-status">
        {info.data ? (
          <span className="muted sysinfo" data-testid="system-info">
            {redisLabel(info.data.redis)} · {topology(info.data.redis)}
          </span>
        ) : null}
        {note ? (
          <span className="conn-note" data-testid="connection-note" aria-hidden="true">
            {note}
          </span>
        ) : null}
        <ConnectionIndicator
          state={health.indicator}
          detail={conn.streamUrl.replace(/^https?:\/\//, "")}
          note={note ?? undefined}
          testId="connection"
        />
      </div>
    </header>
  );
}
