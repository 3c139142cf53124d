// `npm run bench`'s arguments, judged before anything starts: a mistake is one message and exit 2, --help
// lists what there is, and neither costs a redis-server or a minute of CPU.
import { parseArgs } from "node:util";

/** Every scenario by id, as --help lists it; main.ts's table must have exactly these ids. */
export const SCENARIO_HELP = {
  a: "sequential: uncontended acquire+release pairs on distinct keys",
  b: "parallel: concurrent loops on distinct keys over one connection",
  c: "contended: many tasks on one key (GET → work → SET)",
  d: "watchdog: many held locks renewed by the watchdog",
  e: "api: POST /trpc/stock.deduct on 100 products through both API instances",
  f: "cross-process: (c) split over 2, 4 and 8 processes",
  g: "live view: locks.watch on both API instances among many held locks and other keys",
  h: "cluster cost: (c) on one Redis against a 3-master Cluster",
  i: "semaphore: many tasks on one few-permit semaphore",
  j: "cross-process over a delaying proxy: (f) with a slow round trip",
} as const;
export type ScenarioId = keyof typeof SCENARIO_HELP;
const IDS = Object.keys(SCENARIO_HELP) as ScenarioId[];

export const usage = `usage: npm run bench -- [options]
  --only <ids>               scenarios to run, comma-separated (default: all)
  --rounds <n>               rounds per scenario (default 3)
  --throughput-rounds <n>    rounds of the throughput scenarios (default 5)
  --quick                    a short run to check the bench works; results are not comparable
  --merge                    put this run's scenarios into latest.{md,json} and the README table, keeping the others
  --api-server <server.js>   scenario (g) against another API build
  -h, --help                 this text
scenarios:
${IDS.map((id) => `  ${id}  ${SCENARIO_HELP[id]}`).join("\n")}
exit status: 0 done; 1 the bench failed; 2 bad arguments`;

export interface BenchArgs {
  rounds: number;
  throughputRounds: number;
  only: ScenarioId[];
  quick: boolean;
  merge: boolean;
  apiServer?: string;
}

export type ParsedBenchArgs =
  | { kind: "help" }
  | { kind: "error"; message: string }
  | ({ kind: "run" } & BenchArgs);

function positive(flag: string, value: string): number | string {
  if (!/^\d+$/.test(value) || Number(value) < 1)
    return `${flag} must be a positive whole number, got "${value}"`;
  return Number(value);
}

/** `argv` without node and the script. */
export function parseBenchArgs(argv: string[]): ParsedBenchArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        rounds: { type: "string", default: "3" },
        "throughput-rounds": { type: "string", default: "5" },
        only: { type: "string", default: IDS.join(",") },
        quick: { type: "boolean", default: false },
        "api-server": { type: "string" },
        merge: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (err) {
    return { kind: "error", message: (err as Error).message };
  }
  if (values.help) return { kind: "help" };
  const rounds = positive("--rounds", values.rounds as string);
  if (typeof rounds === "string") return { kind: "error", message: rounds };
  const throughputRounds = positive("--throughput-rounds", values["throughput-rounds"] as string);
  if (typeof throughputRounds === "string") return { kind: "error", message: throughputRounds };
  const only = (values.only as string).split(",").map((s) => s.trim());
  const unknown = only.filter((s) => !(s in SCENARIO_HELP));
  if (unknown.length)
    return {
      kind: "error",
      message: `unknown scenario(s) ${unknown.join(", ")}; choose from ${IDS.join(",")}`,
    };
  return {
    kind: "run",
    rounds,
    throughputRounds,
    only: only as ScenarioId[],
    quick: values.quick === true,
    merge: values.merge === true,
    ...(typeof values["api-server"] === "string" ? { apiServer: values["api-server"] } : {}),
  };
}
