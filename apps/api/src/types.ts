import type { ScenarioName, StockMode } from "./schemas.js";

/**
 * What a lock is: a `mutex` (one owner, `lock:{r}`), a `semaphore` (up to N holders, one permit each,
 * `lock:semaphore:{r}`) or a `read-write` lock (many readers or one writer, `lock:rw:{r}`).
 */
export type LockKind = "mutex" | "semaphore" | "read-write";

/** How an owner holds its lock: a mutex's sole owner, a semaphore permit, a reader or the writer. */
export type HoldMode = "exclusive" | "permit" | "read" | "write";

/** One owner field of a lock hash. `instanceId` is the owner id's prefix: the process holding it. */
export interface LockOwnerView {
  owner: string;
  /** Re-entries: a writer that re-entered as reader counts both. */
  count: number;
  instanceId: string;
  mode: HoldMode;
}

/** A semaphore's permits: `used` is one per holder; `total` as last acquired with (null if never recorded). */
export interface PermitsView {
  used: number;
  total: number | null;
}

/** A read-write lock's holders at a glance. */
export interface ReadWriteView {
  readers: number;
  /** The writer's owner id, or null while readers (or nobody) hold it. */
  writer: string | null;
  /** A refused writer's mark is live: new readers are kept out until it gets its turn. */
  writerWaiting: boolean;
}

/** Which store holds a lock: the main Redis, the Redlock nodes, or the PostgreSQL lock table. */
export type LockStore = "redis" | "redlock" | "postgres";

export interface LockView {
  store: LockStore;
  /** Always `mutex` for the `redlock` and `postgres` stores. */
  kind: LockKind;
  /** Set for a semaphore, null otherwise. */
  permits: PermitsView | null;
  /** Set for a read-write lock, null otherwise. */
  readWrite: ReadWriteView | null;
  /**
   * The lock's key, e.g. `lock:{1001}` (a product's lock). A Redis, a Redlock and a PostgreSQL lock on the same resource
   * share a key: `store` + `key` identify a row.
   */
  key: string;
  resource: string;
  /**
   * Empty in `locks.watch` for a lock that was taken and gone again before the observer could read it (an API
   * running late): it comes in `added` with `pttlMs` 0, and its key in `removed` of the next delta.
   */
  owners: LockOwnerView[];
  /** Remaining lease in ms at the `at` of the event (or snapshot) that carries this view (-1: no TTL). */
  pttlMs: number;
  /**
   * The full lease, to scale a TTL bar, or null when unknown. For `redis` locks in `locks.watch`, the longest TTL
   * the observer read right after an acquire or a renewal (within a few ms of the lease); in `locks.list`, known
   * only for locks this API instance holds.
   */
  leaseMs: number | null;
  /** The fencing token: a mutex's holder's; for a semaphore or read-write lock the newest grant held now. */
  token: number | null;
  /**
   * How many processes queue for this lock in Redis (the library's waiter queue: one entry per waiting
   * process, its local waiters behind it; an entry of a process that died counts until it expires).
   * A semaphore or read-write lock has no queue: 1 while its `~waiters` mark says a refused attempt waits
   * for a release (at least one waiter, not a count), else 0. Always 0 for the `redlock` and `postgres` stores.
   */
  waiters: number;
}

/** `locks.list`: every held lock at one moment. */
export interface LocksSnapshot {
  /** Wall-clock time of the snapshot (epoch ms), to animate TTL bars from. */
  at: number;
  instanceId: string;
  locks: LockView[];
}

/**
 * `locks.watch` yields these. First a `snapshot` (the full list, filtered by the input's `prefix`), then a `delta`
 * per change (a subscriber that fell behind gets its pending deltas folded into one), and a `heartbeat` after 10 s
 * without either. Should another `snapshot` come, it replaces the whole list. A reconnect (EventSource's
 * Last-Event-ID / `lastEventId` input is accepted) starts again with a snapshot.
 */
export interface LocksSnapshotEvent extends LocksSnapshot {
  kind: "snapshot";
}

/**
 * What changed since the previous event. Apply in this order: drop every row whose `key` is in `removed`, then
 * upsert `added` and `changed` by `store` + `key` (a lock of another store on a removed key comes back in `added`).
 * `changed` carries the whole view: owners or re-entry counts changed, a new token, waiters, or the lease was
 * renewed (a renewal shows as `pttlMs` jumping back up).
 */
export interface LocksDeltaEvent {
  kind: "delta";
  /** Wall-clock time of the delta (epoch ms); each view's `pttlMs` is relative to it. */
  at: number;
  instanceId: string;
  added: LockView[];
  changed: LockView[];
  /** Keys (`LockView.key`) of locks no longer held. */
  removed: string[];
}

/** Nothing changed for 10 s; the stream is alive. */
export interface LocksHeartbeatEvent {
  kind: "heartbeat";
  at: number;
}

export type LocksEvent = LocksSnapshotEvent | LocksDeltaEvent | LocksHeartbeatEvent;

export interface Stock {
  productId: string;
  qty: number;
  /** Highest fencing token written (0 when never written by the fenced path). */
  fence: number;
  exists: boolean;
}

export type DeductRejectReason = "sold-out" | "lock-timeout" | "stale-token" | "lock-lost";

export type DeductResult =
  | { ok: true; mode: StockMode; instanceId: string; stock: number; token: number | null; waitedMs: number }
  | {
      ok: false;
      mode: StockMode;
      instanceId: string;
      reason: DeductRejectReason;
      /** Stock as last seen by this request (after the write, or at the check). */
      stock: number | null;
      waitedMs: number;
    };

export interface OrderItem {
  productId: string;
  quantity: number;
  /** The product's stock-lock token its deduction was written with; null when the order took no stock. */
  token: number | null;
}

export interface Order {
  orderId: string;
  /** The first item's product (the seed's single-product field). */
  productId: string;
  /** Units across all items. */
  quantity: number;
  status: "created";
  /** Epoch ms. */
  createdAt: number;
  instanceId: string;
  /** Fencing token of the submit lock that created it. */
  token: number | null;
  items: OrderItem[];
  /** Its items were taken from stock (an order given `items`); false for the seed's single-product order. */
  fromStock: boolean;
}

export interface OrderSubmitResult {
  order: Order;
  replayed: boolean;
}

export interface BurstProgress {
  type: "progress";
  done: number;
  total: number;
  stock: number;
}

export interface BurstReport {
  type: "report";
  mode: StockMode;
  requests: number;
  initialStock: number;
  successes: number;
  soldOut: number;
  rejected: Record<string, number>;
  errors: number;
  finalStock: number;
  lowestStock: number;
  oversold: number;
  durationMs: number;
  latencyMs: { p50: number; p95: number; p99: number };
  perInstance: Record<string, number>;
  /**
   * Redis commands per success caused by the run's requests: only the commands the deduct path sends (lock
   * scripts, stock reads and writes), so observers such as the live view are not counted.
   */
  redisCommandsPerSuccess: number | null;
  /** The burst's OpenTelemetry trace (its requests and their lock spans), when the API exports traces. */
  traceId?: string;
}

export type BurstEvent = BurstProgress | BurstReport;

export type ScenarioEventKind =
  | "info"
  | "acquired"
  | "renewed"
  | "waiting"
  | "released"
  | "rejected"
  | "expired"
  | "write"
  | "killed"
  | "error";

export interface ScenarioStep {
  type: "event";
  seq: number;
  /** Epoch ms. */
  at: number;
  /** Since the scenario started. */
  elapsedMs: number;
  actor: string;
  kind: ScenarioEventKind;
  message: string;
  data: Record<string, string | number | boolean | null>;
  /** The scenario's locks right after the event. */
  locks: LockView[];
}

export interface ScenarioDone {
  type: "done";
  seq: number;
  at: number;
  elapsedMs: number;
  name: ScenarioName;
  ok: boolean;
  summary: string;
}

export type ScenarioEvent = ScenarioStep | ScenarioDone;

/** One hold in the read-write demo, in ms since the demo started (the API's monotonic clock). */
export interface ReadWriteHold {
  actor: string;
  mode: "read" | "write";
  /** When it asked for the lock. */
  requestedMs: number;
  /** When the lock was granted (acquire returned). */
  acquiredMs: number;
  /** When it let go (release was called). */
  releasedMs: number;
  token: number | null;
}

/** The read-write demo's verdict, computed from its holds. */
export interface ReadWriteVerdict {
  ok: boolean;
  /** Two or more readers held the lock at the same time. */
  readersOverlapped: boolean;
  /** No reader held it while the writer did. */
  writerExclusive: boolean;
  /** The writer got the lock, and no reader that asked after it got in before it was done. */
  writerNotStarved: boolean;
  /** One sentence per check, saying what the holds show. */
  findings: string[];
}

export interface ReadWriteDemoResult {
  resource: string;
  /** The lock's key, as the live view lists it. */
  key: string;
  durationMs: number;
  holds: ReadWriteHold[];
  verdict: ReadWriteVerdict;
}

/** A run that ended without its report or timeline end: it failed, was cancelled, or its instance died. */
export interface RunFailed {
  type: "failed";
  message: string;
}

/** What `demo.runs.watch` yields (each as a tracked event); `report`, `done` and `failed` end a run. */
export type RunEvent = BurstEvent | ScenarioEvent | RunFailed;

export interface JobRun {
  /** Tick number: floor(scheduled wall time / interval). */
  tick: number;
  scheduledAt: number;
  startedAt: number;
  instanceId: string;
  durationMs: number;
  token: number | null;
  /** What the cleanup removed. */
  removed: number;
}

export interface ModeInfo {
  mode: StockMode;
  available: boolean;
  reason: string | null;
}

/** Without the admin token (when ADMIN_TOKEN is set), versions and addresses are null or empty. */
export interface ClusterNodeInfo {
  address: string;
  role: "master" | "replica";
  /** A replica's master. */
  master: string | null;
  /** Slot ranges a master serves, e.g. "0-5460". */
  slots: string[];
}

export interface SystemInfo {
  /** False when the details below were left out. */
  detailed: boolean;
  instanceId: string;
  startedAt: number;
  uptimeMs: number;
  node: string | null;
  redis: {
    version: string | null;
    /** `sentinel`: the primary the Sentinels named (REDIS_SENTINELS). */
    mode: "standalone" | "cluster" | "sentinel";
    reachable: boolean;
    /** On a Cluster: live masters serving slots and live replicas; behind Sentinels: 1 and the online replicas (counts are always shown). */
    masters: number;
    replicas: number;
    /** Their addresses (`host:port`, a replica with its master's): details, left out without the admin token. */
    nodes: ClusterNodeInfo[];
  };
  redlock: { available: boolean; reason: string | null; nodes: string[] };
  /** The `postgres` mode's lock store: available when migrated and answering now. */
  postgres: { available: boolean; reason: string | null; server: string | null; version: string | null };
  modes: ModeInfo[];
  config: {
    apiUrls: string[];
    jobIntervalMs: number;
    orderProcessingMs: number;
    adminTokenRequired: boolean;
  };
}
