import type { Redis } from "ioredis";
import type { ContenderFactory } from "../contenders/types.js";
import type { Spread } from "../harness/stats.js";

export interface BenchContext {
  redisUrl: string;
  /** FLUSHALL, INFO and setup; never counted as a lock call. */
  admin: Redis;
  /** The GET/SET of the work done under the lock, kept off the libraries' connections. */
  work: Redis;
  /** Rounds of the scenarios whose runs take seconds: (c), (d), (f) and (i). */
  rounds: number;
  /** Rounds of the short, noisier throughput scenarios: (a), (b) and (e). */
  throughputRounds: number;
  quick: boolean;
  lockyard: ContenderFactory;
  peers: ContenderFactory[];
  /**
   * Lockyard on other stores than Redis (PostgreSQL, when it could be started): rows in (a), (b) and (c),
   * never counted as peers in a target.
   */
  otherStores?: ContenderFactory[];
  /** The API server scenario (g) starts (default apps/api/dist/server.js): `--api-server` measures another build. */
  apiServer?: string;
}

export interface Column {
  key: string;
  header: string;
  /** Digits after the point in the table. */
  digits: number;
}

export interface Row {
  id: string;
  label: string;
  /** Which settings the row ran with, when a scenario has more than one. */
  profile?: string;
  values: Record<string, Spread>;
  /** "target → measured PASS|MISS" lines, on Lockyard's rows only. */
  targets?: TargetResult[];
}

export interface TargetResult {
  text: string;
  measured: number;
  limit: number;
  unit: string;
  pass: boolean;
}

export interface ScenarioResult {
  id: string;
  title: string;
  /** Header of the first column (default "library"). */
  rowHeader?: string;
  columns: Column[];
  rows: Row[];
  /** Each library's exact settings in this scenario. */
  settings: Record<string, string>;
  notes: string[];
  /** Set when the scenario could not run (e.g. the API is not built yet). */
  pending?: string;
}
