"use client";

import type { BurstReport as ApiBurstReport, RouterInputs, RunEvent } from "@lockyard/api";
import { useState } from "react";
import { useTRPCClient } from "~/trpc/react";
import { useRunWatch } from "./use-run";

export type BurstInput = RouterInputs["demo"]["burst"]["start"];
export type BurstReport = ApiBurstReport;
export type Mode = BurstReport["mode"];

export interface StockPoint {
  /** Seconds since Start. */
  t: number;
  stock: number;
  done: number;
}

export interface BurstRun {
  id: number;
  startedAt: number;
  report: BurstReport;
}

export interface BurstState {
  status: "idle" | "running" | "done" | "error";
  progress: { done: number; total: number; stock: number } | null;
  series: StockPoint[];
  report: BurstReport | null;
  error: unknown;
}

const idle: BurstState = { status: "idle", progress: null, series: [], report: null, error: null };
const HISTORY = 12;

export function useBurst() {
  const client = useTRPCClient();
  const watch = useRunWatch();
  const [state, setState] = useState<BurstState>(idle);
  const [history, setHistory] = useState<BurstRun[]>([]);

  const start = (input: BurstInput) => {
    const t0 = performance.now();
    const startedAt = Date.now();
    const initial = input.initialStock ?? 100;
    setState({
      status: "running",
      progress: { done: 0, total: input.requests ?? 200, stock: initial },
      series: [{ t: 0, stock: initial, done: 0 }],
      report: null,
      error: null,
    });
    const onError = (error: unknown) => setState((s) => ({ ...s, status: "error", error }));
    // Starting is a mutation; the run then goes on on the server whether or not this page watches it.
    client.demo.burst.start.mutate(input).then(({ runId }) => watch(runId, { onEvent, onError }), onError);
    const onEvent = (ev: RunEvent) => {
      const t = (performance.now() - t0) / 1000;
      if (ev.type === "failed") {
        setState((s) => ({ ...s, status: "error", error: new Error(ev.message) }));
      } else if (ev.type === "progress") {
        setState((s) => ({
          ...s,
          progress: { done: ev.done, total: ev.total, stock: ev.stock },
          series: [...s.series, { t, stock: ev.stock, done: ev.done }],
        }));
      } else if (ev.type === "report") {
        setState((s) => ({
          ...s,
          status: "done",
          report: ev,
          progress: { done: ev.requests, total: ev.requests, stock: ev.finalStock },
          series: [...s.series, { t, stock: ev.finalStock, done: ev.requests }],
        }));
        setHistory((h) => [{ id: (h[0]?.id ?? 0) + 1, startedAt, report: ev }, ...h].slice(0, HISTORY));
      }
    };
  };

  return { state, history, start };
}
