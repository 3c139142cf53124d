// npm run burst -- --mode redis [--requests 200] [--url http://127.0.0.1:4001] [--json] ...
import { TRPCClientError } from "@trpc/client";
import { createApiClient } from "../client.js";
import type { AppRouter } from "../root.js";
import type { BurstReport, RunEvent } from "../types.js";
import { parseBurstArgs, usage } from "./burst-args.js";
import { printReport, progressBar } from "./burst-print.js";

const EXIT = { ok: 0, oversold: 1, usage: 2, unreachable: 3, failed: 4 } as const;
/** How long the API gets to answer /healthz before the CLI says it is down. */
const REACH_TIMEOUT_MS = 3_000;
const UNSAFE_MODES = new Set(["none", "local"]);

function parse() {
  // Only ADMIN_TOKEN: the server's other variables (env.ts) are none of the CLI's business.
  const args = parseBurstArgs(process.argv.slice(2), process.env.ADMIN_TOKEN);
  if (args.kind === "help") {
    console.log(usage);
    process.exit(EXIT.ok);
  }
  if (args.kind === "error") {
    console.error(`${args.message}\n${usage}`);
    process.exit(EXIT.usage);
  }
  return args;
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
