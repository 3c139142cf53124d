"use client";

import type { RouterInputs, RouterOutputs } from "@lockyard/api";
import { useState } from "react";
import { useEndpoints, useTRPCClient } from "~/trpc/react";
import { useOneShotStream } from "./use-stream";

export type BurstInput = Exclude<RouterInputs["demo"]["burst"], undefined>;
type BurstEvent = RouterOutputs["demo"]["burst"] extends AsyncIterable<infer E> ? E : never;
export type BurstReport = Extract<BurstEvent, { type: "report" }>;
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
  const endpoints = useEndpoints();
  const run = useOneShotStream();
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
    run<BurstEvent>(endpoints, (h) => client.demo.burst.subscribe(input, h), {
      onData: (ev) => {
        const t = (performance.now() - t0) / 1000;
        if (ev.type === "progress") {
          setState((s) => ({
            ...s,
            progress: { done: ev.done, total: ev.total, stock: ev.stock },
            series: [...s.series, { t, stock: ev.stock, done: ev.done }],
          }));
        } else {
          setState((s) => ({
            ...s,
            status: "done",
            report: ev,
            progress: { done: ev.requests, total: ev.requests, stock: ev.finalStock },
            series: [...s.series, { t, stock: ev.finalStock, done: ev.requests }],
          }));
          setHistory((h) => [{ id: (h[0]?.id ?? 0) + 1, startedAt, report: ev }, ...h].slice(0, HISTORY));
        }
      },
      onError: (error) => setState((s) => ({ ...s, status: "error", error })),
      onComplete: () =>
        setState((s) =>
          s.status === "running"
            ? { ...s, status: "error", error: new Error("The run ended without a report.") }
            : s,
        ),
    });
  };

  return { state, history, start };
}
