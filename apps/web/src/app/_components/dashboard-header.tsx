"use client";

import { ConnectionIndicator } from "@lockyard/ui/connection-indicator";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "~/trpc/react";
import { ApiDocsLink } from "./api-docs-link";
import { useLiveConnection } from "./live-locks";

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

export function DashboardHeader() {
  const trpc = useTRPC();
  const conn = useLiveConnection();
  const info = useQuery(trpc.system.info.queryOptions(undefined, { refetchInterval: 15_000 }));
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
            Redis {info.data.redis.version} · {topology(info.data.redis)}
          </span>
        ) : null}
        {conn.note ? (
          <span className="conn-note" data-testid="connection-note" aria-hidden="true">
            {conn.note}
          </span>
        ) : null}
        <ConnectionIndicator
          state={conn.state}
          detail={conn.streamUrl.replace(/^https?:\/\//, "")}
          note={conn.note ?? undefined}
          testId="connection"
        />
      </div>
    </header>
  );
}
