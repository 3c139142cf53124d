"use client";

import { Badge } from "@lockyard/ui/badge";
import { type Column, type SortState, Table } from "@lockyard/ui/table";
import { TtlBar } from "@lockyard/ui/ttl-bar";
import { useMemo, useState } from "react";
import { shortId } from "~/lib/format";
import type { LiveLock } from "./live-locks";
import { LockKind } from "./lock-kind";
import { LockPager } from "./lock-pager";
import { type RowState, useRowLifecycle } from "./use-row-lifecycle";

const STORE_TITLES: Record<LiveLock["store"], string> = {
  redis: "held in the main Redis",
  redlock: "held on a majority of the Redlock nodes",
  postgres: "held in the PostgreSQL lock table",
};

const MODE_TITLES: Record<LiveLock["owners"][number]["mode"], string> = {
  exclusive: "the sole owner",
  permit: "holds one permit",
  read: "a reader",
  write: "the writer",
};

export const PAGE_SIZE = 25;

/** `tagged`: the copy tests read (the other one is the narrow layout's, under the resource). */
function Owners({ item, tagged }: { item: LiveLock; tagged: boolean }) {
  return (
    <ul className="owners">
      {item.owners.map((o) => (
        <li
          key={o.owner}
          data-testid={tagged ? "lock-owner" : undefined}
          data-owner={o.owner}
          data-count={o.count}
        >
          <Badge tone="info" title="holding instance" testId={tagged ? "lock-instance" : undefined}>
            {o.instanceId}
          </Badge>{" "}
          <code className="mono muted owner-id" title={o.owner}>
            {shortId(o.owner)}
          </code>{" "}
          {o.mode !== "exclusive" ? (
            <>
              <Badge
                tone={o.mode === "write" ? "warn" : "neutral"}
                title={MODE_TITLES[o.mode]}
                testId={tagged ? "lock-owner-mode" : undefined}
              >
                {o.mode}
              </Badge>{" "}
            </>
          ) : null}
          <Badge tone={o.count > 1 ? "warn" : "neutral"} title="re-entry count">
            ×{o.count}
          </Badge>
        </li>
      ))}
    </ul>
  );
}

const columns: Column<RowState<LiveLock>>[] = [
  {
    key: "resource",
    header: "Resource",
    sortable: true,
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
        <div className="lock-kind-line">
          <LockKind item={item} />
        </div>
        {/* In a narrow table the holders sit under the resource instead of in their own column. */}
        <div className="lock-owners-inline">
          <Owners item={item} tagged={false} />
          <span className="muted" title="fence token" data-testid="lock-token-inline">
            fence <span className="mono">{item.token ?? "–"}</span>
          </span>
        </div>
      </>
    ),
  },
  {
    key: "holder",
    header: "Holder × re-entries",
    className: "lock-col-owners",
    sortable: true,
    render: ({ item }) => <Owners item={item} tagged />,
  },
  {
    key: "waiters",
    header: "Waiting",
    className: "num",
    sortable: true,
    render: ({ item }) =>
      item.waiters === undefined ? (
        <span className="muted" title="not reported by this API version">
          –
        </span>
      ) : (
        <span data-testid="lock-waiters" title="clients queued for this lock">
          {item.waiters}
        </span>
      ),
  },
  {
    key: "token",
    header: "Fence",
    className: "lock-col-token num",
    sortable: true,
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
    sortable: true,
    render: ({ item, phase }) =>
      phase === "gone" ? (
        <Badge tone="neutral">released</Badge>
      ) : (
        <TtlBar
          pttlMs={item.pttlMs}
          receivedAt={item.receivedAt}
          leaseMs={item.leaseMs ?? undefined}
          testId="lock-ttl"
        />
      ),
  },
];

type SortKey = "resource" | "holder" | "waiters" | "token" | "ttl";

function remaining(l: LiveLock, now: number): number {
  return l.pttlMs < 0 ? Number.POSITIVE_INFINITY : l.pttlMs - (now - l.receivedAt);
}

/** Code-point order: fast on a thousand rows, and resource names are ASCII identifiers. */
function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function comparator(key: SortKey, now: number): (a: LiveLock, b: LiveLock) => number {
  switch (key) {
    case "holder":
      return (a, b) => byText(a.owners[0]?.instanceId ?? "", b.owners[0]?.instanceId ?? "");
    case "waiters":
      return (a, b) => (a.waiters ?? -1) - (b.waiters ?? -1);
    case "token":
      return (a, b) => (a.token ?? -1) - (b.token ?? -1);
    case "ttl":
      return (a, b) => remaining(a, now) - remaining(b, now);
    default:
      return () => 0;
  }
}

export interface LockTableProps {
  locks: readonly LiveLock[];
  empty: string;
  caption: string;
  /** The live stream is down: the rows are the last known state, dimmed. */
  stale?: boolean;
  testId?: string;
}

/** The live locks, sortable by any column, a page at a time: a thousand locks stay one light table. */
export function LockTable({ locks, empty, caption, stale = false, testId }: LockTableProps) {
  const rows = useRowLifecycle(locks, (l) => l.id);
  const [sort, setSort] = useState<SortState>({ key: "resource", dir: "asc" });
  const [page, setPage] = useState(0);
  const sorted = useMemo(() => {
    const cmp = comparator(sort.key as SortKey, performance.now());
    const sign = sort.dir === "asc" ? 1 : -1;
    return [...rows].sort(
      (a, b) =>
        sign * (cmp(a.item, b.item) || byText(a.item.resource, b.item.resource)) ||
        byText(a.item.store, b.item.store),
    );
  }, [rows, sort]);
  const pages = Math.max(1, Math.ceil(sorted.length / PAGE_SIZE));
  const current = Math.min(page, pages - 1);
  const visible = sorted.slice(current * PAGE_SIZE, (current + 1) * PAGE_SIZE);
  const onSort = (key: string) => {
    setSort((s) => ({ key, dir: s.key === key && s.dir === "asc" ? "desc" : "asc" }));
    setPage(0);
  };
  return (
    <div className={`lock-table ${stale ? "stale" : ""}`} data-stale={stale ? "true" : "false"}>
      <Table
        testId={testId}
        caption={caption}
        columns={columns}
        rows={visible}
        rowKey={(r) => r.item.id}
        rowClassName={(r) => `row-${r.phase}`}
        rowAttrs={(r) => ({
          "data-testid": "lock-row",
          "data-resource": r.item.resource,
          "data-store": r.item.store,
          "data-kind": r.item.kind,
          "data-phase": r.phase,
        })}
        empty={empty}
        sort={sort}
        onSort={onSort}
      />
      {sorted.length > PAGE_SIZE ? (
        <LockPager
          page={current}
          pages={pages}
          pageSize={PAGE_SIZE}
          total={sorted.length}
          onPage={setPage}
          label={caption}
        />
      ) : null}
    </div>
  );
}
