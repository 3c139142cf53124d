import type { Mode } from "./use-burst";

export const MODES: readonly { mode: Mode; title: string; explain: string }[] = [
  {
    mode: "none",
    title: "No lock",
    explain: "Check, work, decrement with nothing guarding it: concurrent buyers oversell.",
  },
  {
    mode: "local",
    title: "Local mutex",
    explain: "An in-process lock: safe inside one API instance, oversells across two.",
  },
  {
    mode: "redis",
    title: "Redis lock",
    explain:
      "A Lockyard lock shared by every instance, plus a fenced write that refuses stale tokens. A lock protects only code that takes the same lock: mixing modes on one product relies on every write refusing to go below zero.",
  },
  {
    mode: "redlock",
    title: "Redlock",
    explain: "A Lockyard Redlock: a majority of independent Redis nodes must agree.",
  },
  {
    mode: "postgres",
    title: "PostgreSQL lock",
    explain: "PostgreSQL lock table: INSERT … ON CONFLICT, LISTEN/NOTIFY wake-ups — correct, slower.",
  },
  {
    mode: "atomic",
    title: "Atomic Lua",
    explain: "One decrement-if-positive script and no lock at all: some problems need none.",
  },
];
