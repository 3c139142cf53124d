"use client";

import type { ScenarioEvent as ApiScenarioEvent, RouterInputs } from "@lockyard/api";
import { useState } from "react";
import { useTRPCClient } from "~/trpc/react";
import { useRunWatch } from "./use-run";

export type ScenarioInput = RouterInputs["demo"]["scenario"]["start"];
export type ScenarioName = ScenarioInput["name"];
export type ScenarioEvent = ApiScenarioEvent;
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
  const watch = useRunWatch();
  const [state, setState] = useState<ScenarioState>({
    name: null,
    status: "idle",
    steps: [],
    done: null,
    error: null,
  });

  const start = (input: ScenarioInput) => {
    setState({ name: input.name, status: "running", steps: [], done: null, error: null });
    const onError = (error: unknown) => setState((s) => ({ ...s, status: "error", error }));
    client.demo.scenario.start.mutate(input).then(
      ({ runId }) =>
        watch(runId, {
          onEvent: (ev) =>
            setState((s) => {
              if (ev.type === "event") return { ...s, steps: [...s.steps, ev].slice(-MAX_STEPS) };
              if (ev.type === "done") return { ...s, status: "done", done: ev };
              if (ev.type === "failed") return { ...s, status: "error", error: new Error(ev.message) };
              return s;
            }),
          onError,
        }),
      onError,
    );
  };

  return { state, start };
}
