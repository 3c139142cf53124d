// npm run burst -w @lockyard/api -- --mode redis --requests 200 [--url http://127.0.0.1:4001] ...
import { parseArgs } from "node:util";
import { createTRPCClient, httpLink, httpSubscriptionLink, splitLink, TRPCClientError } from "@trpc/client";
import { EventSource } from "eventsource";
import { z } from "zod";
import type { AppRouter } from "../root.js";
import { burstInput } from "../schemas.js";
import type { BurstReport } from "../types.js";

const usage = `usage: npm run burst -- --mode <none|local|redis|redlock|atomic> [--requests 200]
       [--initial-stock 100] [--work-ms 10] [--product 1001] [--url http://127.0.0.1:4001]`;

function parse() {
  const { values } = parseArgs({
    options: {
      mode: { type: "string" },
      requests: { type: "string" },
      "initial-stock": { type: "string" },
      "work-ms": { type: "string" },
      product: { type: "string" },
      url: { type: "string", default: "http://127.0.0.1:4001" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const num = (s: string | undefined) => (s === undefined ? undefined : Number(s));
  const input = burstInput.safeParse({
    mode: values.mode,
    requests: num(values.requests),
    initialStock: num(values["initial-stock"]),
    workMs: num(values["work-ms"]),
    productId: values.product,
  });
  const url = z.url({ protocol: /^https?$/ }).safeParse(values.url);
  if (!input.success || !url.success) {
    console.error(
      `${input.error ? z.prettifyError(input.error) : ""}${url.error ? "\n--url must be an http(s) URL" : ""}`,
    );
    console.error(usage);
    process.exit(2);
  }
  return { input: input.data, url: url.data.replace(/\/+$/, "") };
}

function bar(done: number, total: number): string {
  const width = 30;
  const n = Math.round((done / Math.max(1, total)) * width);
  return `[${"#".repeat(n)}${".".repeat(width - n)}] ${done}/${total}`;
}

function printReport(r: BurstReport) {
  const rows: [string, string | number][] = [
    ["mode", r.mode],
    ["requests", r.requests],
    ["initial stock", r.initialStock],
    ["successes", r.successes],
    ["sold out", r.soldOut],
    [
      "rejected",
      Object.entries(r.rejected)
        .map(([k, v]) => `${k}: ${v}`)
        .join(", ") || "0",
    ],
    ["errors", r.errors],
    ["final stock", r.finalStock],
    ["lowest stock", r.lowestStock],
    ["oversold", r.oversold],
    ["duration ms", r.durationMs],
    ["latency p50/p95/p99 ms", `${r.latencyMs.p50} / ${r.latencyMs.p95} / ${r.latencyMs.p99}`],
    [
      "per instance",
      Object.entries(r.perInstance)
        .map(([k, v]) => `${k}: ${v}`)
        .join(", "),
    ],
    ["redis commands / success", r.redisCommandsPerSuccess ?? "n/a"],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  console.log(`\n${"-".repeat(w + 30)}`);
  for (const [k, v] of rows) console.log(`${k.padEnd(w)}  ${v}`);
  console.log("-".repeat(w + 30));
  console.log(
    r.lowestStock >= 0 && r.oversold === 0
      ? "Stock never dropped below zero."
      : `Oversold by ${r.oversold} (lowest stock ${r.lowestStock}).`,
  );
}

const { input, url } = parse();
const client = createTRPCClient<AppRouter>({
  links: [
    splitLink({
      condition: (op) => op.type === "subscription",
      true: httpSubscriptionLink({ url: `${url}/trpc`, EventSource }),
      false: httpLink({ url: `${url}/trpc` }),
    }),
  ],
});

const sub = client.demo.burst.subscribe(input, {
  onData(event) {
    if (event.type === "progress") {
      process.stdout.write(`\r${bar(event.done, event.total)}  stock ${event.stock}   `);
    } else {
      printReport(event);
      sub.unsubscribe();
      process.exitCode = 0;
    }
  },
  onError(err) {
    const code =
      err instanceof TRPCClientError ? (err.data as { code?: string } | undefined)?.code : undefined;
    console.error(`\nburst failed${code ? ` (${code})` : ""}: ${err.message}`);
    sub.unsubscribe();
    process.exitCode = 1;
  },
});
