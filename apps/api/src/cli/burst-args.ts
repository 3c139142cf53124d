// `npm run burst`'s arguments, judged without touching the network or the server's environment: every
// mistake is one message and exit 2, never a stack trace.
import { parseArgs } from "node:util";
import { z } from "zod";
import { burstInput } from "../schemas.js";

export const usage = `usage: npm run burst -- --mode <none|local|redis|redlock|postgres|atomic> [--requests 200]
       [--initial-stock 100] [--work-ms 10] [--product 1001] [--url http://127.0.0.1:4001]
       [--admin-token <token>] [--json]
exit status: 0 done; 1 a safe mode oversold; 2 bad arguments; 3 API unreachable; 4 burst refused or failed`;

export type BurstArgs =
  | { kind: "help" }
  | { kind: "error"; message: string }
  | {
      kind: "run";
      input: z.output<typeof burstInput>;
      url: string;
      json: boolean;
      token: string | undefined;
    };

const COUNTS = { requests: "requests", "initial-stock": "initialStock", "work-ms": "workMs" } as const;

/** `argv` without node and the script; `adminToken` is ADMIN_TOKEN, the one variable the CLI reads. */
export function parseBurstArgs(argv: string[], adminToken: string | undefined): BurstArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
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
    }));
  } catch (err) {
    // node:util's messages name the option ("Unknown option '--bogus'"); its error code is noise here.
    return { kind: "error", message: (err as Error).message };
  }
  if (values.help) return { kind: "help" };
  const counts: Record<string, number> = {};
  for (const [flag, key] of Object.entries(COUNTS)) {
    const raw = values[flag];
    if (typeof raw !== "string") continue;
    // Number() would take 0x10, 1e1 and " 7 ": a count is written in decimal digits.
    if (!/^\d+$/.test(raw))
      return { kind: "error", message: `--${flag} must be a whole number, got "${raw}"` };
    counts[key] = Number(raw);
  }
  const input = burstInput.safeParse({ mode: values.mode, productId: values.product, ...counts });
  const url = z.url({ protocol: /^https?$/ }).safeParse(values.url);
  if (!input.success) return { kind: "error", message: z.prettifyError(input.error) };
  if (!url.success) return { kind: "error", message: `--url must be an http(s) URL, got "${values.url}"` };
  const token = (values["admin-token"] as string | undefined) ?? (adminToken || undefined);
  return {
    kind: "run",
    input: input.data,
    url: url.data.replace(/\/+$/, ""),
    json: values.json === true,
    token,
  };
}
