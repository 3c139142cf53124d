"use client";

import { Badge, type Tone } from "@lockyard/ui/badge";
import { Panel } from "@lockyard/ui/panel";
import { type Column, Table } from "@lockyard/ui/table";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useEffect, useState } from "react";
import { formatMs, timeOfDay } from "~/lib/format";
import { useTRPC } from "~/trpc/react";
import { ErrorMessage } from "./error-message";
import { type Attempt, useDoubleSubmit } from "./use-double-submit";

const tones: Record<Attempt["outcome"], Tone> = {
  pending: "neutral",
  created: "ok",
  replayed: "info",
  conflict: "warn",
  error: "bad",
};

const attemptColumns: Column<Attempt>[] = [
  { key: "n", header: "Client", render: (a) => `#${a.n}` },
  { key: "target", header: "Sent to", className: "hide-narrow", render: (a) => <code>{a.target}</code> },
  {
    key: "outcome",
    header: "Outcome",
    render: (a) => <Badge tone={tones[a.outcome]}>{a.outcome === "conflict" ? "CONFLICT" : a.outcome}</Badge>,
  },
  { key: "detail", header: "Detail", render: (a) => <span className="muted">{a.detail}</span> },
  { key: "ms", header: "Time", render: (a) => (a.ms === null ? "…" : formatMs(a.ms)) },
];

function newOrderId(): string {
  return `ord-${Math.random().toString(36).slice(2, 8)}`;
}

export function OrdersPanel() {
  const trpc = useTRPC();
  const orders = useQuery(trpc.order.list.queryOptions({ limit: 20 }, { refetchInterval: 3000 }));
  const { attempts, running, submit } = useDoubleSubmit();
  // Random ids are made after mount so the server render and the first client render agree.
  const [orderId, setOrderId] = useState("");
  useEffect(() => setOrderId(newOrderId()), []);
  const [parallel, setParallel] = useState("5");

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    if (running) return;
    const n = Math.min(20, Math.max(1, Number.parseInt(parallel, 10) || 1));
    void submit(orderId.trim(), n);
  };

  const created = attempts.filter((a) => a.outcome === "created").length;
  return (
    <Panel
      id="orders"
      testId="panel-orders"
      title="Orders"
      subtitle="Submit one order from several clients at once. The submit lock lets exactly one create it."
    >
      <form className="row-form" onSubmit={onSubmit}>
        <label className="field wide">
          <span>Order id</span>
          <input
            className="input"
            value={orderId}
            onChange={(e) => setOrderId(e.target.value)}
            data-testid="order-id"
            required
          />
        </label>
        <label className="field narrow">
          <span>Clients</span>
          <input
            className="input"
            type="number"
            min={1}
            max={20}
            value={parallel}
            onChange={(e) => setParallel(e.target.value)}
            data-testid="order-parallel"
          />
        </label>
        {/* aria-disabled, not disabled: the button keeps focus while the clients race. */}
        <button type="submit" className="button primary" aria-disabled={running} data-testid="order-submit">
          {running ? "Submitting…" : `Submit ×${parallel || 1}`}
        </button>
        <button
          type="button"
          className="button"
          onClick={() => running || setOrderId(newOrderId())}
          aria-disabled={running}
        >
          New id
        </button>
      </form>
      <div role="status" data-testid="order-status">
        {attempts.length > 0 && !running ? (
          <p className="summary" data-testid="order-summary" data-created={created}>
            {created === 1
              ? "Exactly one client created the order."
              : created === 0
                ? "No client created it here (it already existed, or another client is creating it)."
                : `${created} clients created it: that would be a double order.`}
          </p>
        ) : null}
      </div>
      <Table
        testId="order-attempts"
        caption="Submit attempts"
        columns={attemptColumns}
        rows={attempts}
        rowKey={(a) => a.n}
        rowAttrs={(a) => ({ "data-testid": "order-attempt", "data-outcome": a.outcome })}
        empty="Press Submit to race the clients."
      />
      <h3 className="h3">Recent orders</h3>
      <ErrorMessage error={orders.error} testId="orders-error" />
      <Table
        testId="order-list"
        caption="Recent orders"
        columns={[
          { key: "id", header: "Order", render: (o) => <code>{o.orderId}</code> },
          { key: "product", header: "Product", className: "hide-narrow", render: (o) => o.productId },
          { key: "qty", header: "Qty", render: (o) => o.quantity },
          { key: "by", header: "Created by", render: (o) => o.instanceId },
          { key: "token", header: "Fence", className: "hide-narrow", render: (o) => o.token ?? "–" },
          { key: "at", header: "At", className: "hide-narrow", render: (o) => timeOfDay(o.createdAt) },
        ]}
        rows={orders.data?.orders ?? []}
        rowKey={(o) => o.orderId}
        rowAttrs={(o) => ({ "data-testid": "order-row", "data-order": o.orderId })}
        empty={orders.isPending ? "Loading…" : "No orders yet."}
      />
    </Panel>
  );
}
