// The public surface for the dashboard: types only, so no server code reaches the browser.
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "./root.js";

export type { AppRouter } from "./root.js";
export type RouterInputs = inferRouterInputs<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;
export type { ScenarioName, StockMode } from "./schemas.js";
export type {
  BurstEvent,
  BurstProgress,
  BurstReport,
  DeductRejectReason,
  DeductResult,
  JobRun,
  LocksDeltaEvent,
  LocksEvent,
  LocksHeartbeatEvent,
  LocksSnapshot,
  LocksSnapshotEvent,
  LockView,
  ModeInfo,
  Order,
  RunEvent,
  RunFailed,
  ScenarioEvent,
  ScenarioEventKind,
  ScenarioStep,
  Stock,
  SystemInfo,
} from "./types.js";
