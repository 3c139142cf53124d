"use client";

import type { RouterInputs, RouterOutputs } from "@lockyard/api";
import { useState } from "react";
import { useEndpoints, useTRPCClient } from "~/trpc/react";
import { useOneShotStream } from "./use-stream";

export type ScenarioInput = RouterInputs["demo"]["scenario"];
export type ScenarioName = ScenarioInput["name"];
export type ScenarioEvent = RouterOutputs["demo"]["scenario"] extends AsyncIterable<infer E> ? E : never;
export type ScenarioStep = Extract<ScenarioEvent, { type: "event" }>;
export type ScenarioDone = Extract<ScenarioEvent, { type: "done" }>;

export interface ScenarioState {
  name: ScenarioName | null;
  status: "idle" | "running" | "done" | "error";
  steps: ScenarioStep[];
  done: ScenarioDone | null;
  error: unknown;
}

const MAX_STEPS = 500;

export function useScenario() {
  const client = useTRPCClient();
  const endpoints = useEndpoints();
  const run = useOneShotStream();
  const [state, setState] = useState<ScenarioState>({
    name: null,
    status: "idle",
    steps: [],
    done: null,
    error: null,
  });

  const start = (input: ScenarioInput) => {
    setState({ name: input.name, status: "running", steps: [], done: null, error: null });
    run<ScenarioEvent>(endpoints, (h) => client.demo.scenario.subscribe(input, h), {
      onData: (ev) =>
        setState((s) =>
          ev.type === "event"
            ? { ...s, steps: [...s.steps, ev].slice(-MAX_STEPS) }
            : { ...s, status: "done", done: ev },
        ),
      onError: (error) => setState((s) => ({ ...s, status: "error", error })),
      onComplete: () => setState((s) => (s.status === "running" ? { ...s, status: "done" } : s)),
    });
  };

  return { state, start };
}
