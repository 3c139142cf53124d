"use client";

import type { ReadWriteDemoResult } from "@lockyard/api";
import { useState } from "react";
import { useTRPCClient } from "~/trpc/react";

export interface ReadWriteDemoState {
  status: "idle" | "running" | "done" | "error";
  result: ReadWriteDemoResult | null;
  error: unknown;
}

const IDLE: ReadWriteDemoState = { status: "idle", result: null, error: null };

/** Runs the read-write demo (`demo.readWrite.run`): one mutation that answers the timeline and its verdict. */
export function useReadWriteDemo() {
  const client = useTRPCClient();
  const [state, setState] = useState<ReadWriteDemoState>(IDLE);
  const run = (timeScale: number) => {
    setState({ status: "running", result: null, error: null });
    client.demo.readWrite.run.mutate({ timeScale }).then(
      (result) => setState({ status: "done", result, error: null }),
      (error: unknown) => setState({ status: "error", result: null, error }),
    );
  };
  return { state, run };
}
