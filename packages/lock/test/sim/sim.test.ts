import { appendFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runKindsSeed } from "./kinds-run.js";
import { runSeed, type SimResult } from "./run.js";

// `npm test`: 500 seeds. scripts/sim.mjs (`npm run test:sim -- --seeds N | --seed S`) sets these.
const SEEDS = Number(process.env.SIM_SEEDS ?? 500);
const FIRST = Number(process.env.SIM_SEED ?? 1);
/** Print the whole trace of a failing (or, with one seed, the replayed) run, not just its last steps. */
const TRACE = process.env.SIM_TRACE === "1";
/** Keep going after a failing seed; every failing seed is listed at the end. */
const ALL = process.env.SIM_ALL === "1";
/** Violations matching this regex are counted but do not stop or fail the run (a known, reported bug). */
const IGNORE = process.env.SIM_IGNORE ? new RegExp(process.env.SIM_IGNORE) : undefined;
/** Adds the key-loss fault (a held lock key vanishes). */
const KEY_LOSS = process.env.SIM_KEY_LOSS === "1";
/** Adds the workloads of run.ts's `extra` option. */
const EXTRA = process.env.SIM_EXTRA === "1";
/** Locks over Redlock on 3 or 5 simulated nodes (`--redlock`). */
const REDLOCK = process.env.SIM_REDLOCK === "1";
/** A release and a give-up (an abort, or close()) in one tick (`--same-tick`). */
const SAME_TICK = process.env.SIM_SAME_TICK === "1";
/** A release in one process and a give-up in another at the same moment (`--peer-tick`). */
const PEER_TICK = process.env.SIM_PEER_TICK === "1";
/** Semaphores, read-write locks and multi-resource acquires (kinds-run.ts) instead of the mutex run (`--kinds`). */
const KINDS = process.env.SIM_KINDS === "1";
/** `npm test`'s share of --kinds seeds (about 15 s on an idle 2-core machine). */
const KINDS_SEEDS = 200;
const KINDS_KEY_LOSS_SEEDS = 60;
const KINDS_SAME_TICK_SEEDS = 200;
/** Appends a progress line every 1000 seeds (long runs). */
const PROGRESS = process.env.SIM_PROGRESS_FILE;

const replay = (seed: number) =>
  `npm run test:sim -w @lockyard/lock -- --seed ${seed}${KINDS ? " --kinds" : ""}`;

function report(r: SimResult): string {
  const steps = TRACE ? r.trace : r.trace.slice(-40);
  return `seed ${r.seed}: ${r.violation}\nreplay: ${replay(r.seed)}\n${TRACE ? "trace" : "last steps"}:\n${steps.join("\n")}`;
}

describe("deterministic simulation of the lock", () => {
  it(
    `keeps every invariant over ${SEEDS} seeds from ${FIRST}`,
    async () => {
      const started = performance.now();
      let events = 0;
      let acquired = 0;
      let keysLost = 0;
      const failed: SimResult[] = [];
      let failures = 0;
      let ignored = 0;
      let handoffs = 0;
      let early = 0;
      let earlyRefused = 0;
      let byMessage = 0;
      let handedToLeaver = 0;
      const kindsStats = { multi: 0, upgrades: 0, contended: 0, placesPassed: 0, permitsHanded: 0 };
      /** Failing seeds by kind of violation (names and numbers blanked): how many, and the first. */
      const kinds = new Map<string, { count: number; first: number }>();
      for (let seed = FIRST; seed < FIRST + SEEDS; seed++) {
        const r = KINDS
          ? await runKindsSeed(seed, { fullTrace: TRACE, keyLoss: KEY_LOSS, sameTick: SAME_TICK })
          : await runSeed(seed, {
              fullTrace: TRACE,
              keyLoss: KEY_LOSS,
              extra: EXTRA,
              redlock: REDLOCK,
              sameTick: SAME_TICK,
              peerTick: PEER_TICK,
            });
        events += r.stats.events;
        acquired += r.stats.acquired;
        keysLost += r.stats.keysLost;
        handoffs += r.stats.handoffs;
        early += r.stats.early ?? 0;
        earlyRefused += r.stats.earlyRefused ?? 0;
        byMessage += r.stats.byMessage ?? 0;
        handedToLeaver += r.stats.handedToLeaver ?? 0;
        kindsStats.multi += r.stats.multi ?? 0;
        kindsStats.upgrades += r.stats.upgrades ?? 0;
        kindsStats.contended += r.stats.contended ?? 0;
        kindsStats.placesPassed += r.stats.placesPassed ?? 0;
        kindsStats.permitsHanded += r.stats.permitsHanded ?? 0;
        if (TRACE && SEEDS === 1 && r.ok) console.log(`seed ${seed} (ok):\n${r.trace.join("\n")}`);
        if (!r.ok && IGNORE?.test(r.violation!)) {
          ignored++;
          if (PROGRESS) appendFileSync(PROGRESS, `ignored seed ${seed}: ${r.violation}\n`);
        } else if (!r.ok) {
          if (failed.length < 50) failed.push(r);
          failures++;
          const kind = kindOf(r.violation!);
          const k = kinds.get(kind) ?? { count: 0, first: seed };
          k.count++;
          kinds.set(kind, k);
          if (ALL) console.log(`seed ${seed}: ${r.violation}`);
          if (PROGRESS) appendFileSync(PROGRESS, `FAIL seed ${seed}: ${r.violation}\n`);
          if (!ALL) break;
        }
        const done = seed - FIRST + 1;
        if (PROGRESS && done % 1000 === 0)
          appendFileSync(
            PROGRESS,
            `${new Date().toISOString()} ${done} seeds, ${failures} failed, ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
          );
      }
      const secs = ((performance.now() - started) / 1000).toFixed(1);
      const summary = [...kinds]
        .map(([kind, k]) => `  ${k.count}× (first seed ${k.first}) ${kind}`)
        .join("\n");
      if (PROGRESS) appendFileSync(PROGRESS, `done: ${failures} failed, ${secs} s\n${summary}\n`);
      if (failures > 0)
        expect.fail(
          `${failures} failing seed(s)${failures > failed.length ? ", the first 50" : ""}: ${failed.map((r) => r.seed).join(", ")}\n${summary}\n${report(failed[0]!)}`,
        );
      console.log(
        `sim: ${SEEDS} seeds${ignored ? ` (${ignored} failing as SIM_IGNORE allows)` : ""}, ${events} steps, ${acquired} acquisitions, ${handoffs} handoffs (${early} granted early, ${earlyRefused} taken back, ${byMessage} held from the message, ${handedToLeaver} to a waiter that had given up), ${keysLost} lock keys lost${KINDS ? `, ${kindsStats.multi} multi-resource acquires, ${kindsStats.upgrades} upgrades, ${kindsStats.contended} refused attempts, ${kindsStats.placesPassed} semaphore places passed on, ${kindsStats.permitsHanded} permits handed on in a release` : ""}, ${secs} s`,
      );
    },
    Math.max(600_000, SEEDS * 2_000),
  );

  // The opt-in modes (README): a lost lock key, the workloads added to catch defects 3 and 8 (an outer
  // hold released before its re-entry, a subscriber dying with a release message in flight), Redlock
  // over 3 or 5 nodes, a give-up in the tick of a release (defect 11), and one in another process at that moment.
  // Run by plain `npm test` only; test:sim runs whatever its flags say in the test above.
  it.skipIf(process.env.SIM_SEED !== undefined || process.env.SIM_SEEDS !== undefined)(
    "keeps every invariant over 800 seeds with --extra, 300 with --key-loss, 500 with --redlock, 500 with --same-tick and 300 with --peer-tick",
    async () => {
      for (const [opts, seeds, flag] of [
        [{ extra: true }, 800, "--extra"],
        [{ keyLoss: true }, 300, "--key-loss"],
        [{ redlock: true }, 500, "--redlock"],
        [{ sameTick: true }, 500, "--same-tick"],
        [{ peerTick: true }, 300, "--peer-tick"],
      ] as const) {
        for (let seed = 1; seed <= seeds; seed++) {
          const r = await runSeed(seed, opts);
          if (!r.ok) {
            expect.fail(`${flag} ${report(r).replace(replay(seed), `${replay(seed)} ${flag}`)}`);
          }
        }
      }
    },
    600_000,
  );

  // Semaphores, read-write locks and multi-resource acquires (kinds-run.ts).
  it.skipIf(process.env.SIM_SEED !== undefined || process.env.SIM_SEEDS !== undefined)(
    `keeps every invariant of semaphores, read-write locks and multi-resource acquires over ${KINDS_SEEDS} seeds, ${KINDS_KEY_LOSS_SEEDS} with --key-loss and ${KINDS_SAME_TICK_SEEDS} with --same-tick (--kinds)`,
    async () => {
      for (const [keyLoss, seeds, flags, sameTick] of [
        [false, KINDS_SEEDS, "--kinds", false],
        [true, KINDS_KEY_LOSS_SEEDS, "--kinds --key-loss", false],
        [false, KINDS_SAME_TICK_SEEDS, "--kinds --same-tick", true],
      ] as const) {
        for (let seed = 1; seed <= seeds; seed++) {
          const r = await runKindsSeed(seed, { keyLoss, sameTick });
          if (!r.ok) expect.fail(`${flags} ${report(r).replace(replay(seed), `${replay(seed)} ${flags}`)}`);
        }
      }
    },
    600_000,
  );

  it.skipIf(process.env.SIM_SEED !== undefined)(
    "is deterministic: one seed replays the same trace",
    async () => {
      for (const run of [runSeed, runKindsSeed]) {
        const a = await run(4242);
        const b = await run(4242);
        // Owner ids carry 128 random bits by design: compare them by order of appearance.
        expect(normalize(b.trace)).toEqual(normalize(a.trace));
        expect(b.stats).toEqual(a.stats);
      }
    },
  );
});

/** A violation with process names, owner ids and numbers blanked, to group failing seeds. */
function kindOf(violation: string): string {
  return violation
    .split("\n")[0]!
    .replace(/p\d+:[0-9a-f]{32}/g, "<owner>")
    .replace(/\bp\d+\b/g, "pN")
    .replace(/\d+/g, "N")
    .slice(0, 200);
}

function normalize(trace: string[]): string[] {
  const ids = new Map<string, number>();
  return trace.map((line) =>
    line.replace(/:[0-9a-f]{32}/g, (id) => {
      if (!ids.has(id)) ids.set(id, ids.size);
      return `:owner${ids.get(id)}`;
    }),
  );
}
