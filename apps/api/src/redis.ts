import { Cluster, type ClusterOptions, Redis, type RedisOptions } from "ioredis";
import type { Logger } from "pino";

/**
 * The one place that creates Redis connections. They fail fast while Redis is down (no offline
 * queue, one retry per request, bounded connect and command time) so requests answer 503 at once,
 * never re-send a command that may already have run, and keep reconnecting in the background forever
 * so the API recovers by itself.
 */
export const redisOptions = {
  enableOfflineQueue: false,
  // ioredis re-sends commands still unanswered when a connection drops. A decrement whose reply was lost
  // would run twice; unanswered, it fails at commandTimeout and the caller is told it may have run.
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 1,
  connectTimeout: 2_000,
  commandTimeout: 5_000,
  retryStrategy: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt, 6), 2_000),
} satisfies RedisOptions;

/**
 * On Sentinel: the same promises as one server, and the primary found again soon after a failover: ioredis asks
 * the Sentinels on every reconnect, which is tried at least once a second. (Not ioredis's `failoverDetector`:
 * with it, one of two API instances stayed disconnected for good in 1 of 4 failovers under load.)
 */
const sentinelOptions = {
  sentinelRetryStrategy: (attempt: number) => Math.min(100 * attempt, 1_000),
  retryStrategy: (attempt: number) => Math.min(100 * attempt, 1_000),
} satisfies RedisOptions;

/**
 * The same promises on a Cluster. A command is retried only where Redis says it did not run it (MOVED,
 * ASK, TRYAGAIN, CLUSTERDOWN); `retryDelayOnFailover: 0` turns off ioredis's re-send of a command whose
 * connection closed under it (a master killed mid-write): that one fails, and the caller is told it may
 * have run. A dead master's connection is dropped (no per-node retry) and the slots are read again every
 * second, so a promoted replica takes over without a restart.
 */
export const clusterOptions = {
  // On for the connections the lock library duplicates from this client: with it off, its subscriber's
  // SSUBSCRIBE (sent before it is connected) is refused and every waiter falls back to its retry timer (40
  // contended deducts took 10 s instead of 0.3 s). The API's own client refuses commands while the Cluster is
  // down instead of queueing them (failFastWhileDown below); a dead master alone fails its commands at once,
  // the node connections having no retry.
  enableOfflineQueue: true,
  enableReadyCheck: true,
  scaleReads: "master",
  retryDelayOnFailover: 0,
  retryDelayOnClusterDown: 100,
  retryDelayOnTryAgain: 100,
  retryDelayOnMoved: 0,
  maxRedirections: 16,
  slotsRefreshTimeout: 1_000,
  slotsRefreshInterval: 1_000,
  clusterRetryStrategy: (attempt: number) => Math.min(100 * attempt, 2_000),
  redisOptions: {
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 5_000,
  },
} satisfies ClusterOptions;

/**
 * Where the API's Redis is: one server (`REDIS_URL`), or the seed nodes of a Cluster
 * (`REDIS_CLUSTER_NODES`). As a string (for the demo's child processes, which get one) a Cluster is
 * `redis-cluster://host:port,host:port`.
 */
export interface HostPort {
  host: string;
  port: number;
}
export type RedisTarget =
  | { topology: "single"; url: string }
  | { topology: "cluster"; nodes: HostPort[] }
  | { topology: "sentinel"; name: string; sentinels: HostPort[] };

const CLUSTER_SCHEME = "redis-cluster://";
/** `redis-sentinel://<name>@host:port,host:port`. */
const SENTINEL_SCHEME = "redis-sentinel://";

const hostPortList = (nodes: HostPort[]) => nodes.map((n) => `${n.host}:${n.port}`).join(",");
const parseHostPorts = (s: string): HostPort[] =>
  s.split(",").map((hp) => {
    const i = hp.lastIndexOf(":");
    return { host: hp.slice(0, i), port: Number(hp.slice(i + 1)) };
  });

export function targetString(target: RedisTarget): string {
  if (target.topology === "single") return target.url;
  if (target.topology === "cluster") return CLUSTER_SCHEME + hostPortList(target.nodes);
  return `${SENTINEL_SCHEME}${target.name}@${hostPortList(target.sentinels)}`;
}

export function parseTarget(s: string): RedisTarget {
  if (s.startsWith(CLUSTER_SCHEME)) {
    return { topology: "cluster", nodes: parseHostPorts(s.slice(CLUSTER_SCHEME.length)) };
  }
  if (s.startsWith(SENTINEL_SCHEME)) {
    const rest = s.slice(SENTINEL_SCHEME.length);
    const at = rest.indexOf("@");
    return { topology: "sentinel", name: rest.slice(0, at), sentinels: parseHostPorts(rest.slice(at + 1)) };
  }
  return { topology: "single", url: s };
}

export const isCluster = (client: Redis | Cluster): client is Cluster =>
  (client as { isCluster?: boolean }).isCluster === true;

/**
 * A connection to the target. A Cluster is returned typed as `Redis`: the API's modules (and the demo's)
 * are written against one client type, and a Cluster answers every command they send with the same
 * signature. What must differ on a Cluster (scanning every master, the masters and replicas in
 * system.info) checks `isCluster` first.
 */
export function createRedis(target: string | RedisTarget, opts: { name: string; logger?: Logger }): Redis {
  const t = typeof target === "string" ? parseTarget(target) : target;
  const redis =
    t.topology === "single"
      ? new Redis(t.url, { ...redisOptions, connectionName: opts.name })
      : t.topology === "sentinel"
        ? new Redis({
            ...redisOptions,
            ...sentinelOptions,
            sentinels: t.sentinels,
            name: t.name,
            connectionName: opts.name,
          })
        : (failFastWhileDown(
            new Cluster(t.nodes, {
              ...clusterOptions,
              redisOptions: { ...clusterOptions.redisOptions, connectionName: opts.name },
            }),
          ) as unknown as Redis);
  let down = false;
  redis.on("error", (err: Error) => {
    // ioredis emits one error per failed reconnect; log the transition, not every attempt.
    if (!down) opts.logger?.warn({ err: err.message, connection: opts.name }, "redis unavailable");
    down = true;
  });
  redis.on("ready", () => {
    if (down) opts.logger?.info({ connection: opts.name }, "redis reachable again");
    down = false;
  });
  if (t.topology === "cluster") {
    redis.on("+node", (node: Redis) => {
      // ioredis connects to a node on its first command: connect as soon as the node is known, so a
      // promoted replica is ready before the first request for its slots arrives.
      if (node.status === "wait") node.connect().catch(() => undefined);
      opts.logger?.debug({ node: `${node.options.host}:${node.options.port}` }, "cluster node added");
    });
    redis.on("-node", (node: Redis) =>
      opts.logger?.warn({ node: `${node.options.host}:${node.options.port}` }, "cluster node lost"),
    );
  }
  return redis;
}

/**
 * The Cluster's offline queue stays on for the connections the lock library duplicates from it (see
 * clusterOptions), but the API's own commands must not wait in it: while the whole Cluster is unreachable they
 * would hang with no timeout. They are refused at once instead, with the message of a client without an
 * offline queue (never sent, so a plain 503). CLUSTER commands pass: ioredis's own ready check uses them.
 */
function failFastWhileDown(cluster: Cluster): Cluster {
  const send = cluster.sendCommand.bind(cluster);
  cluster.sendCommand = (command, stream, node) => {
    if (cluster.status !== "ready" && command.name !== "cluster") {
      command.reject(new Error("Cluster isn't ready and enableOfflineQueue options is false"));
      return command.promise;
    }
    return send(command, stream, node);
  };
  return cluster;
}

/**
 * Resolves once the connection is ready (on a Cluster: the slots are known and every master answers), or
 * false after timeoutMs (the caller serves 503s meanwhile).
 */
export async function waitUntilReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  if (!(await readyEvent(redis, timeoutMs))) return false;
  const client = redis as Redis | Cluster;
  if (!isCluster(client)) return true;
  const left = Math.max(0, deadline - performance.now());
  const pings = Promise.all(client.nodes("master").map((n) => n.ping())).then(() => true);
  return answers(pings, left);
}

function readyEvent(redis: Redis | Cluster, timeoutMs: number): Promise<boolean> {
  if (redis.status === "ready") return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      redis.off("ready", onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    timer.unref();
    redis.on("ready", onReady);
  });
}

/** Whether `p` resolves true within `ms`; never rejects, and the timer is cleared. */
async function answers(p: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([p.catch(() => false), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** REDIS_CLUSTER_NODES when set, else REDIS_SENTINELS when set, else REDIS_URL. */
export function redisTarget(env: {
  REDIS_URL: string;
  REDIS_CLUSTER_NODES: HostPort[];
  REDIS_SENTINELS: HostPort[];
  REDIS_SENTINEL_NAME: string;
}): RedisTarget {
  if (env.REDIS_CLUSTER_NODES.length > 0) return { topology: "cluster", nodes: env.REDIS_CLUSTER_NODES };
  if (env.REDIS_SENTINELS.length > 0)
    return { topology: "sentinel", name: env.REDIS_SENTINEL_NAME, sentinels: env.REDIS_SENTINELS };
  return { topology: "single", url: env.REDIS_URL };
}

/** The servers holding keys: the client itself, or every master of a Cluster (to SCAN each). */
export function mastersOf(client: Redis | Cluster): Redis[] {
  return isCluster(client) ? client.nodes("master") : [client];
}
