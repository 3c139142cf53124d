// `npm run test:sim -w @lockyard/lock -- --seeds 100000`: runs the deterministic simulation (test/sim) over many
// seeds. `-- --seed 1234` replays one seed and prints its full trace; `--from N` starts at seed N; `--all` keeps
// going after a failing seed and lists every failing one at the end; `--ignore REGEX` counts violations matching
// it without stopping (a known bug already reported); `--key-loss` adds the fault of a held lock key vanishing;
// `--extra` the workloads added after the first catch measurements (long leases, re-entry outliving its outer);
// `--kinds` runs semaphores, read-write locks and multi-resource acquires (test/sim/kinds-run.ts) instead of the
// mutex run (with `--key-loss` too; test/sim/README.md lists the reported bugs `--ignore` may skip); `--same-tick` a
// give-up in the tick of a release in that process, `--peer-tick` in another process (mutex runs only). Sets
// SIM_SEEDS / SIM_SEED / SIM_TRACE / SIM_ALL for test/sim/sim.test.ts and runs it with a config that starts no
// Redis or PostgreSQL (the simulation needs neither).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const env = { ...process.env };
const usage =
  "usage: sim.mjs [--seeds N] [--from N] [--seed N] [--trace] [--all] [--key-loss] [--extra] [--redlock] [--kinds] [--same-tick] [--peer-tick] [--ignore REGEX]";
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  const num = () => {
    const v = Number(args[++i]);
    if (!Number.isInteger(v) || v < 0) {
      console.error(`${a} needs a whole number\n${usage}`);
      process.exit(2);
    }
    return String(v);
  };
  if (a === "--seeds") env.SIM_SEEDS = num();
  else if (a === "--from") env.SIM_SEED = num();
  else if (a === "--seed") {
    env.SIM_SEED = num();
    env.SIM_SEEDS = "1";
    env.SIM_TRACE = "1";
  } else if (a === "--trace") env.SIM_TRACE = "1";
  else if (a === "--all") env.SIM_ALL = "1";
  else if (a === "--key-loss") env.SIM_KEY_LOSS = "1";
  else if (a === "--extra") env.SIM_EXTRA = "1";
  else if (a === "--redlock") env.SIM_REDLOCK = "1";
  else if (a === "--kinds") env.SIM_KINDS = "1";
  else if (a === "--same-tick") env.SIM_SAME_TICK = "1";
  else if (a === "--peer-tick") env.SIM_PEER_TICK = "1";
  else if (a === "--ignore") env.SIM_IGNORE = args[++i];
  else {
    console.error(`unknown argument ${a}\n${usage}`);
    process.exit(2);
  }
}
const vitest = join(dirname(createRequire(import.meta.url).resolve("vitest/package.json")), "vitest.mjs");
const child = spawn(
  process.execPath,
  [vitest, "run", "test/sim/sim.test.ts", "--config", "test/sim/vitest.config.ts"],
  { cwd: pkg, env, stdio: "inherit" },
);
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
