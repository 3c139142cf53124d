"use client";

import { Badge, type Tone } from "@lockyard/ui/badge";
import { Panel } from "@lockyard/ui/panel";
import { type Column, Table } from "@lockyard/ui/table";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useEffect, useState } from "react";
import { formatMs, timeOfDay } from "~/lib/format";
import { ORDER_ID_MAX_LENGTH, readOrderId } from "~/lib/order-id";
import { orderSummary } from "~/lib/order-summary";
import { readWholeNumber } from "~/lib/whole-number";
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

const CLIENTS = { min: 1, max: 20 } as const;

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
  const [shownErrors, setShownErrors] = useState(false);
  const id = readOrderId(orderId);
  const clients = readWholeNumber(parallel, CLIENTS.min, CLIENTS.max);
  const idError = shownErrors && !id.ok ? id.message : null;
  const clientsError = shownErrors && !clients.ok ? clients.message : null;

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    if (running) return;
    setShownErrors(true);
    if (!id.ok || !clients.ok) return;
    void submit(id.value, clients.value);
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
            maxLength={ORDER_ID_MAX_LENGTH}
            aria-invalid={idError ? true : undefined}
            aria-describedby={idError ? "order-id-error" : undefined}
          />
          {idError ? (
            <span className="field-error" id="order-id-error" role="alert" data-testid="order-id-error">
              {idError}
            </span>
          ) : null}
        </label>
        <label className="field narrow">
          <span>Clients</span>
          <input
            className="input"
            type="number"
            min={CLIENTS.min}
            max={CLIENTS.max}
            value={parallel}
            onChange={(e) => setParallel(e.target.value)}
            data-testid="order-parallel"
            aria-invalid={clientsError ? true : undefined}
            aria-describedby={clientsError ? "order-parallel-error" : undefined}
          />
          {clientsError ? (
            <span
              className="field-error"
              id="order-parallel-error"
              role="alert"
              data-testid="order-parallel-error"
            >
              {clientsError}
            </span>
          ) : null}
        </label>
        {/* aria-disabled, not disabled: the button keeps focus while the clients race. */}
        <button type="submit" className="button primary" aria-disabled={running} data-testid="order-submit">
          {running ? "Submitting…" : clients.ok ? `Submit ×${clients.value}` : "Submit"}
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
            {orderSummary(attempts)}
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
