import type { Context } from "../context.js";
import { stockModes } from "../schemas.js";
import type { ModeInfo, SystemInfo } from "../types.js";

async function redisInfo(ctx: Context): Promise<SystemInfo["redis"]> {
  try {
    const server = await ctx.redis.info("server");
    const version = /redis_version:(\S+)/.exec(server)?.[1] ?? "unknown";
    const mode = /redis_mode:cluster/.test(server) ? "cluster" : "standalone";
    return { version, mode, reachable: true };
  } catch {
    return { version: "unknown", mode: "standalone", reachable: false };
  }
}

export function modeInfo(ctx: Context): ModeInfo[] {
  return stockModes.map((mode) =>
    mode === "redlock" && !ctx.redlock
      ? { mode, available: false, reason: ctx.redlockReason ?? "unavailable" }
      : { mode, available: true, reason: null },
  );
}

export async function systemInfo(ctx: Context): Promise<SystemInfo> {
  return {
    instanceId: ctx.config.instanceId,
    startedAt: ctx.startedAt,
    uptimeMs: Date.now() - ctx.startedAt,
    node: process.version,
    redis: await redisInfo(ctx),
    redlock: {
      available: ctx.redlock !== null,
      reason: ctx.redlock ? null : ctx.redlockReason,
      nodes: ctx.config.redlockNodes,
    },
    modes: modeInfo(ctx),
    config: {
      apiUrls: ctx.config.apiUrls,
      jobIntervalMs: ctx.config.jobIntervalMs,
      orderProcessingMs: ctx.config.orderProcessingMs,
      adminTokenRequired: ctx.config.adminToken !== undefined,
    },
  };
}
