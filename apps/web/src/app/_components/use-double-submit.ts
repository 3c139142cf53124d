"use client";

import type { RouterOutputs } from "@lockyard/api";
import { useQueryClient } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { describeError } from "~/lib/errors";
import { ApiEndpoints } from "~/trpc/endpoints";
import { makeTrpcClient, useEndpoints, useTRPC } from "~/trpc/react";

type SubmitResult = RouterOutputs["order"]["submit"];

export interface Attempt {
  n: number;
  target: string;
  outcome: "pending" | "created" | "replayed" | "conflict" | "error";
  detail: string;
  ms: number | null;
}

/**
 * Sends the same order from N independent clients at once, spread over the API instances
 * (one HTTP request each), so the race is real: only the lock decides who creates it.
 *
 * Each client prefers its own instance and fails over to the others when it cannot reach it, as
 * queries do (a submit is idempotent: a retry replays the stored order). Requests use the streaming
 * batch link, whose HTTP status is 200 with the outcome in the body: a lost race's CONFLICT is an
 * expected result here, not a failed request for the browser console.
 */
export function useDoubleSubmit() {
  const endpoints = useEndpoints();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const clients = useMemo(
    () =>
      endpoints.urls.map((url, i) => {
        const own = new ApiEndpoints([...endpoints.urls.slice(i), ...endpoints.urls.slice(0, i)]);
        return { url, own, client: makeTrpcClient(own, { maxItems: 1, stream: true }) };
      }),
    [endpoints],
  );
  const [attempts, setAttempts] = useState<Attempt[]>([]);
  const [running, setRunning] = useState(false);

  const submit = async (orderId: string, parallel: number) => {
    setRunning(true);
    const initial: Attempt[] = Array.from({ length: parallel }, (_, i) => ({
      n: i + 1,
      target: clients[i % clients.length]?.url ?? "",
      outcome: "pending",
      detail: "",
      ms: null,
    }));
    setAttempts(initial);
    const update = (i: number, patch: Partial<Attempt>) =>
      setAttempts((prev) => prev.map((a, j) => (j === i ? { ...a, ...patch } : a)));
    await Promise.all(
      initial.map(async (_, i) => {
        const { client, own } = clients[i % clients.length]!;
        const t0 = performance.now();
        try {
          const r: SubmitResult = await client.order.submit.mutate({
            orderId,
            productId: "1001",
            quantity: 1,
          });
          update(i, {
            target: own.current(),
            outcome: r.replayed ? "replayed" : "created",
            detail: r.replayed
              ? `stored order from ${r.order.instanceId}`
              : `created by ${r.order.instanceId}`,
            ms: performance.now() - t0,
          });
        } catch (err) {
          const e = describeError(err);
          update(i, {
            target: own.current(),
            outcome: e.code === "CONFLICT" ? "conflict" : "error",
            detail: e.text,
            ms: performance.now() - t0,
          });
        }
      }),
    );
    setRunning(false);
    await queryClient.invalidateQueries({ queryKey: trpc.order.list.queryKey() });
  };

  return { attempts, running, submit };
}
