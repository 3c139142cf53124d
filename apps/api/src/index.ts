// The public surface for the dashboard: types only, so no server code reaches the browser. The rest of its
// types are read off the router (RouterInputs / RouterOutputs); these are event unions a stream sends, and
// the read-write demo's timeline, which the dashboard draws.
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "./root.js";

export type { AppRouter } from "./root.js";
export type RouterInputs = inferRouterInputs<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;
export type {
  BurstReport,
  ReadWriteDemoResult,
  ReadWriteHold,
  ReadWriteVerdict,
  RunEvent,
  ScenarioEvent,
} from "./types.js";
