// npm run burst -- --mode redis [--requests 200] [--url http://127.0.0.1:4001] [--json] ...
import { parseArgs } from "node:util";
import { TRPCClientError } from "@trpc/client";
import { z } from "zod";
import { createApiClient } from "../client.js";
import { env } from "../env.js";
import type { AppRouter } from "../root.js";
import { burstInput } from "../schemas.js";
import type { BurstReport, RunEvent } from "../types.js";
import { printReport, progressBar } from "./burst-print.js";

const usage = `usage: npm run burst -- --mode <none|local|redis|redlock|postgres|atomic> [--requests 200]
       [--initial-stock 100] [--work-ms 10] [--product 1001] [--url http://127.0.0.1:4001]
       [--admin-token <token>] [--json]
exit status: 0 done; 1 a safe mode oversold; 2 bad arguments; 3 API unreachable; 4 burst refused or failed`;

const EXIT = { ok: 0, oversold: 1, usage: 2, unreachable: 3, failed: 4 } as const;
/** How long the API gets to answer /healthz before the CLI says it is down. */
const REACH_TIMEOUT_MS = 3_000;
const UNSAFE_MODES = new Set(["none", "local"]);

function parse() {
  const { values } = parseArgs({
    options: {
      mode: { type: "string" },
      requests: { type: "string" },
      "initial-stock": { type: "string" },
      "work-ms": { type: "string" },
      product: { type: "string" },
      url: { type: "string", default: "http://127.0.0.1:4001" },
      "admin-token": { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(usage);
    process.exit(EXIT.ok);
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
    process.exit(EXIT.usage);
  }
  const token = values["admin-token"] ?? env().ADMIN_TOKEN;
  return { input: input.data, url: url.data.replace(/\/+$/, ""), json: values.json, token };
}

async function reachable(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(REACH_TIMEOUT_MS) });
    return res.status === 200 || res.status === 503;
  } catch {
    return false;
  }
}

function fail(code: number, message: string): never {
  console.error(message);
  process.exit(code);
}

const { input, url, json, token } = parse();
if (!(await reachable(url))) {
  fail(EXIT.unreachable, `cannot reach the API at ${url} (is it running? npm start, or --url)`);
}
const headers = token ? { "x-admin-token": token } : undefined;
const client = createApiClient<AppRouter>(url, headers ? { headers } : {});

let runId: string;
try {
  ({ runId } = await client.demo.burst.start.mutate(input));
} catch (err) {
  const data = err instanceof TRPCClientError ? (err.data as { code?: string; runId?: string }) : undefined;
  fail(
    EXIT.failed,
    `burst refused${data?.code ? ` (${data.code})` : ""}: ${(err as Error).message}${data?.runId ? `\nrunning run: ${data.runId}` : ""}`,
  );
}

const report = await new Promise<BurstReport>((resolve, reject) => {
  const sub = client.demo.runs.watch.subscribe(
    { runId },
    {
      onData({ data }) {
        const event = data as RunEvent;
        if (event.type === "progress" && !json) {
          process.stdout.write(`\r${progressBar(event.done, event.total)}  stock ${event.stock}   `);
        } else if (event.type === "report") {
          sub.unsubscribe();
          resolve(event);
        } else if (event.type === "failed") {
          sub.unsubscribe();
          reject(new Error(event.message));
        }
      },
      onError(err) {
        sub.unsubscribe();
        reject(err);
      },
    },
  );
}).catch((err: unknown) => fail(EXIT.failed, `\nburst ${runId} failed: ${(err as Error).message}`));

if (json) console.log(JSON.stringify({ runId, ...report }, null, 2));
else printReport(report);
// A safe mode that oversold is a bug worth a red CI step; the unsafe modes are expected to.
process.exit(report.oversold > 0 && !UNSAFE_MODES.has(report.mode) ? EXIT.oversold : EXIT.ok);
