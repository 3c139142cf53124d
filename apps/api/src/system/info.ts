import type { Context } from "../context.js";
import { stockModes } from "../schemas.js";
import type { ModeInfo, SystemInfo } from "../types.js";
import { parseClusterNodes } from "./cluster-nodes.js";

async function redisInfo(ctx: Context): Promise<SystemInfo["redis"]> {
  try {
    const server = await ctx.redis.info("server");
    const version = /redis_version:(\S+)/.exec(server)?.[1] ?? "unknown";
    // A primary found through Sentinels says `redis_mode:standalone`: the API knows better.
    if (ctx.config.redisTopology === "sentinel") return { version, ...(await sentinelPrimary(ctx)) };
    const mode = /redis_mode:cluster/.test(server) ? "cluster" : "standalone";
    const nodes =
      mode === "cluster" ? parseClusterNodes(String(await ctx.redis.call("CLUSTER", "NODES"))) : [];
    const masters = mode === "cluster" ? nodes.filter((n) => n.role === "master").length : 1;
    return {
      version,
      mode,
      reachable: true,
      masters,
      replicas: nodes.length - (mode === "cluster" ? masters : 0),
      nodes,
    };
  } catch {
    const mode = ctx.config.redisTopology === "single" ? "standalone" : ctx.config.redisTopology;
    return { version: "unknown", mode, reachable: false, masters: 0, replicas: 0, nodes: [] };
  }
}

/**
 * The primary the Sentinels named (where this instance's connection goes now) and its replicas, as the primary
 * reports them in `INFO replication` (online ones only), so the dashboard shows a failover as it happens.
 */
async function sentinelPrimary(ctx: Context): Promise<Omit<SystemInfo["redis"], "version">> {
  const replication = await ctx.redis.info("replication");
  const stream = ctx.redis.stream as { remoteAddress?: string; remotePort?: number } | undefined;
  const primary = stream?.remoteAddress ? `${stream.remoteAddress}:${stream.remotePort}` : "unknown";
  const replicas = [...replication.matchAll(/^slave\d+:ip=([^,]+),port=(\d+),state=online/gm)].map(
    ([, ip, port]) => ({ address: `${ip}:${port}`, role: "replica" as const, master: primary, slots: [] }),
  );
  return {
    mode: "sentinel",
    reachable: true,
    masters: 1,
    replicas: replicas.length,
    nodes: [{ address: primary, role: "master", master: null, slots: [] }, ...replicas],
  };
}

/** Asks PostgreSQL for its version, so a server that went away shows as unavailable. */
async function postgresInfo(ctx: Context): Promise<SystemInfo["postgres"]> {
  const server = ctx.postgres?.server ?? ctx.config.postgresServer;
  if (!ctx.postgres) return { available: false, reason: ctx.postgresReason, server, version: null };
  try {
    const { rows } = await ctx.postgres.pool.query<{ server_version: string }>("SHOW server_version");
    return { available: true, reason: null, server, version: rows[0]?.server_version ?? "unknown" };
  } catch (err) {
    const reason = `PostgreSQL at ${server} is unreachable (${(err as Error).message})`;
    return { available: false, reason, server, version: null };
  }
}

export function modeInfo(ctx: Context, postgres: SystemInfo["postgres"]): ModeInfo[] {
  return stockModes.map((mode) => {
    if (mode === "redlock" && !ctx.redlock)
      return { mode, available: false, reason: ctx.redlockReason ?? "unavailable" };
    if (mode === "postgres" && !postgres.available)
      return { mode, available: false, reason: postgres.reason ?? "unavailable" };
    return { mode, available: true, reason: null };
  });
}

/**
 * The instance, its stores and modes. Versions, addresses and reasons that name hosts are details for
 * operators: without the admin token (when ADMIN_TOKEN is set) they are left out, and `detailed` says so.
 */
export async function systemInfo(ctx: Context, detailed: boolean): Promise<SystemInfo> {
  const full = await fullInfo(ctx);
  if (detailed) return full;
  const hidden = "details need the admin token";
  return {
    ...full,
    detailed: false,
    node: null,
    redis: { ...full.redis, version: null, nodes: [] },
    redlock: { ...full.redlock, reason: full.redlock.reason && hidden, nodes: [] },
    postgres: { ...full.postgres, reason: full.postgres.reason && hidden, server: null, version: null },
    modes: full.modes.map((m) => ({ ...m, reason: m.reason && hidden })),
    config: { ...full.config, apiUrls: [] },
  };
}

async function fullInfo(ctx: Context): Promise<SystemInfo> {
  const [redis, postgres] = await Promise.all([redisInfo(ctx), postgresInfo(ctx)]);
  return {
    detailed: true,
    instanceId: ctx.config.instanceId,
    startedAt: ctx.startedAt,
    uptimeMs: Date.now() - ctx.startedAt,
    node: process.version,
    redis,
    redlock: {
      available: ctx.redlock !== null,
      reason: ctx.redlock ? null : ctx.redlockReason,
      nodes: ctx.config.redlockNodes,
    },
    postgres,
    modes: modeInfo(ctx, postgres),
    config: {
      apiUrls: ctx.config.apiUrls,
      jobIntervalMs: ctx.config.jobIntervalMs,
      orderProcessingMs: ctx.config.orderProcessingMs,
      adminTokenRequired: ctx.config.adminToken !== undefined,
    },
  };
}
