import { parseBenchArgs, type ScenarioId, usage } from "./cli-args.js";
import { lockyard } from "./contenders/lockyard.js";
import { postgresContender } from "./contenders/postgres.js";
import { redisSemaphore } from "./contenders/redis-semaphore.js";
import { redlock } from "./contenders/redlock.js";
import { seedDesign } from "./contenders/seed.js";
import { connect, installCommandCounter } from "./harness/connections.js";
import { type BenchPostgres, startBenchPostgres } from "./harness/postgres.js";
import { elapsedSeconds, progress } from "./harness/progress.js";
import { startBenchRedis } from "./harness/redis-server.js";
import { scenarioTable } from "./report/markdown.js";
import { updateReadme } from "./report/readme.js";
import { type BenchReport, machineInfo, mergeIntoLatest, writeResults } from "./report/report.js";
import { api } from "./scenarios/api.js";
import { clusterCost } from "./scenarios/cluster.js";
import { contended } from "./scenarios/contended.js";
import { crossProcess } from "./scenarios/cross-process.js";
import { crossProcessNet } from "./scenarios/cross-process-net.js";
import { liveView } from "./scenarios/live-view.js";
import { parallel } from "./scenarios/parallel.js";
import { semaphore } from "./scenarios/semaphore.js";
import { sequential } from "./scenarios/sequential.js";
import type { BenchContext, ScenarioResult } from "./scenarios/types.js";
import { watchdog } from "./scenarios/watchdog.js";

const SCENARIOS: Record<ScenarioId, (ctx: BenchContext) => Promise<ScenarioResult>> = {
  a: sequential,
  b: parallel,
  c: contended,
  d: watchdog,
  e: api,
  f: crossProcess,
  g: liveView,
  h: clusterCost,
  i: semaphore,
  j: crossProcessNet,
};

const parsed = parseBenchArgs(process.argv.slice(2));
if (parsed.kind === "help") {
  console.log(usage);
  process.exit(0);
}
if (parsed.kind === "error") {
  console.error(`${parsed.message}\n(npm run bench -- --help lists the options and scenarios)`);
  process.exit(2);
}
const args = parsed;

async function main(): Promise<void> {
  const { rounds, throughputRounds, only } = args;
  installCommandCounter();
  const redis = await startBenchRedis();
  progress(`redis-server ${redis.url} (pid ${redis.pid}) started`);
  const admin = await connect(redis.url, "bench-admin");
  const work = await connect(redis.url, "bench-work");
  // Lockyard's PostgreSQL backend joins (a)–(c) when PostgreSQL can be had; without it, only its rows are missing.
  let postgres: BenchPostgres | undefined;
  if (only.some((s) => ["a", "b", "c"].includes(s))) {
    try {
      postgres = await startBenchPostgres();
      progress(`PostgreSQL ${postgres.pid ? `(pid ${postgres.pid}) started` : "from DATABASE_URL"}`);
    } catch (err) {
      progress(`PostgreSQL rows left out: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const stopAll = async () => {
    admin.disconnect();
    work.disconnect();
    await Promise.all([redis.stop(), postgres?.stop()]);
  };
  // Ctrl-C still stops the redis-server this bench started.
  process.once("SIGINT", () => void stopAll().finally(() => process.exit(130)));
  try {
    const ctx: BenchContext = {
      redisUrl: redis.url,
      admin,
      work,
      rounds,
      throughputRounds,
      quick: args.quick,
      lockyard,
      peers: [redisSemaphore, redlock, seedDesign],
      otherStores: postgres ? [postgresContender(postgres)] : [],
      ...(args.apiServer ? { apiServer: args.apiServer } : {}),
    };
    const scenarios: ScenarioResult[] = [];
    for (const id of only) {
      progress(`scenario ${id} starting`);
      const result = await SCENARIOS[id](ctx);
      scenarios.push(result);
      console.log(`\n${result.title}\n${scenarioTable(result)}`);
    }
    const report: BenchReport = {
      generatedAt: new Date().toISOString(),
      durationSeconds: elapsedSeconds(),
      rounds,
      throughputRounds,
      quick: args.quick,
      machine: await machineInfo(admin),
      scenarios,
    };
    const partial = args.quick || only.length < Object.keys(SCENARIOS).length;
    const merged = partial && args.merge && !args.quick ? mergeIntoLatest(report) : null;
    const out = merged ?? report;
    const name = partial && !merged ? "partial" : "latest";
    const { md, dir } = writeResults(out, name);
    console.log(`\n${md}`);
    progress(`wrote ${dir}${name}.{md,json}`);
    if (name === "latest") {
      progress(
        updateReadme(out) ? "updated the table in README.md" : "README.md has no bench markers; left alone",
      );
    }
  } finally {
    await stopAll();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
