"use client";

import { Badge } from "@lockyard/ui/badge";
import { type Column, Table } from "@lockyard/ui/table";
import { TtlBar } from "@lockyard/ui/ttl-bar";
import { shortId } from "~/lib/format";
import type { LockView } from "./live-locks";
import { type RowState, useRowLifecycle } from "./use-row-lifecycle";

const STORE_TITLES: Record<LockView["store"], string> = {
  redis: "held in the main Redis",
  redlock: "held on a majority of the Redlock nodes",
  postgres: "held in the PostgreSQL lock table",
};

/** A Redis lock and a PostgreSQL lock on the same resource share a key name: the store tells them apart. */
const rowId = (l: LockView) => `${l.store}:${l.key}`;

function columns(receivedAt: number): Column<RowState<LockView>>[] {
  return [
    {
      key: "resource",
      header: "Resource",
      render: ({ item }) => (
        <>
          <code className="mono" data-testid="lock-resource">
            {item.resource}
          </code>
          {item.store !== "redis" && (
            <>
              {" "}
              <Badge tone="neutral" title={STORE_TITLES[item.store]} testId="lock-store">
                {item.store}
              </Badge>
            </>
          )}
        </>
      ),
    },
    {
      key: "owners",
      header: "Holder × re-entries",
      render: ({ item }) => (
        <ul className="owners">
          {item.owners.map((o) => (
            <li key={o.owner} data-testid="lock-owner" data-owner={o.owner} data-count={o.count}>
              <Badge tone="info" title="holding instance" testId="lock-instance">
                {o.instanceId}
              </Badge>{" "}
              <code className="mono muted hide-narrow" title={o.owner}>
                {shortId(o.owner)}
              </code>{" "}
              <Badge tone={o.count > 1 ? "warn" : "neutral"} title="re-entry count">
                ×{o.count}
              </Badge>
            </li>
          ))}
        </ul>
      ),
    },
    {
      key: "token",
      header: "Fence",
      className: "hide-narrow",
      render: ({ item }) => (
        <span className="mono" data-testid="lock-token">
          {item.token ?? "–"}
        </span>
      ),
    },
    {
      key: "ttl",
      header: "TTL",
      className: "ttl-col",
      render: ({ item, phase }) =>
        phase === "gone" ? (
          <Badge tone="neutral">released</Badge>
        ) : (
          <TtlBar
            pttlMs={item.pttlMs}
            receivedAt={receivedAt}
            leaseMs={item.leaseMs ?? undefined}
            testId="lock-ttl"
          />
        ),
    },
  ];
}

export interface LockTableProps {
  locks: readonly LockView[];
  receivedAt: number;
  empty: string;
  /** The live stream is down: the rows are the last known state, dimmed. */
  stale?: boolean;
  testId?: string;
}

export function LockTable({ locks, receivedAt, empty, stale = false, testId }: LockTableProps) {
  const rows = useRowLifecycle(locks, rowId);
  rows.sort((a, b) => a.item.resource.localeCompare(b.item.resource));
  return (
    <div className={stale ? "stale" : undefined} data-stale={stale ? "true" : "false"}>
      <Table
        testId={testId}
        caption="Locks currently held"
        columns={columns(receivedAt)}
        rows={rows}
        rowKey={(r) => rowId(r.item)}
        rowClassName={(r) => `row-${r.phase}`}
        rowAttrs={(r) => ({
          "data-testid": "lock-row",
          "data-resource": r.item.resource,
          "data-store": r.item.store,
          "data-phase": r.phase,
        })}
        empty={empty}
      />
    </div>
  );
}
