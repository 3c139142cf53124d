import { MUTEXES } from "./kinds-multi.js";
import { fenceOf, type Kind, type KindsState, keyOf } from "./kinds-state.js";
import { READ_WRITES, SEMAPHORES } from "./kinds-tasks.js";
import { LEASE } from "./kinds-track.js";
import { Rng } from "./rng.js";

/**
 * The faults of a kinds run: those of run.ts (connection kills, subscriber kills, pauses past the lease,
 * close() at any moment), a crash (a process stops for good, SIGKILL: its holds run out in Redis), and with
 * `keyLoss` a held lock key that vanishes or Redis restarting empty.
 */
export function scheduleKindsFaults(
  s: KindsState,
  o: { seed: number; stormy: boolean; keyLoss: boolean; horizon: number },
): void {
  const { world } = s;
  const { rng } = world;
  const nFaults = o.stormy ? rng.int(3, 10) : rng.int(0, 2);
  for (let i = 0; i < nFaults; i++) {
    const p = rng.pick(s.procs);
    const what = rng.pick(["kill", "kill-sub", "pause", "pause"]);
    world.at(rng.int(0, 2_500), () => {
      // A crashed process has no connection left to kill, and nothing of it runs to pause.
      if (p.crashed) return;
      if (what === "kill") {
        world.log(`${p.sim.name} connection killed`);
        p.conn.kill();
      } else if (what === "kill-sub") {
        const subs = p.subscribers();
        if (subs.length > 0) rng.pick(subs).kill();
      } else {
        const ms = rng.int(50, 2 * LEASE);
        p.sim.pause(ms);
        p.pausedTotal += ms;
      }
    });
  }
  if (rng.chance(0.25)) {
    const p = rng.pick(s.procs);
    world.at(rng.int(0, 2_500), () => {
      if (p.crashed) return;
      world.log(`${p.sim.name} close()`);
      p.closed = true;
      void p.locks.close();
    });
  }
  const crashRng = new Rng((o.seed * 48_271 + 13) >>> 0);
  if (crashRng.chance(0.15)) {
    const p = crashRng.pick(s.procs);
    world.at(crashRng.int(0, 2_500), () => {
      if (p.closed) return;
      world.log(`${p.sim.name} crashed`);
      p.crashed = true;
      p.sim.pause(2 * o.horizon);
    });
  }
  if (o.keyLoss) scheduleKeyLoss(s, o.seed);
}

const LOCKS: [Kind, string][] = [
  ...SEMAPHORES.map((r): [Kind, string] => ["permit", r]),
  ...READ_WRITES.map((r): [Kind, string] => ["write", r]),
  ...MUTEXES.map((r): [Kind, string] => ["mutex", r]),
];

/** Each from a stream of its own, as in run.ts: a held key lost; Redis restarted empty. */
function scheduleKeyLoss(s: KindsState, seed: number): void {
  const { world } = s;
  const lossRng = new Rng((seed * 7919 + 17) >>> 0);
  if (lossRng.chance(0.3)) {
    const [kind, r] = lossRng.pick(LOCKS);
    const key = keyOf(kind, r);
    const lose = () => {
      // Waits for a moment the lock is held (looking every 20 ms), until the workload is over.
      if (holdersOf(s, kind, key).length === 0) {
        if (world.now < 3_000) world.after(20, lose);
        return;
      }
      world.log(`lock key ${key} lost (held by ${holdersOf(s, kind, key).join(", ")})`);
      s.stats.keysLost++;
      taint(s, kind, r);
      s.redis().del(key);
    };
    world.at(lossRng.int(0, 2_500), lose);
  }
  const restartRng = new Rng((seed * 31_337 + 3) >>> 0);
  if (restartRng.chance(0.2)) {
    world.at(restartRng.int(100, 2_500), () => {
      world.log("Redis restarted empty");
      s.stats.keysLost++;
      for (const [kind, r] of LOCKS) taint(s, kind, r);
      for (const key of s.redis().keys()) s.redis().del(key);
      for (const p of s.procs) {
        if (p.closed || p.crashed) continue;
        world.log(`${p.sim.name} connection killed (restart)`);
        p.conn.kill();
        for (const x of p.subscribers()) x.kill();
      }
    });
  }
}

const holdersOf = (s: KindsState, kind: Kind, key: string): string[] =>
  kind === "mutex" ? s.redis().owners(key) : [...s.shared.live(key).keys()];

/**
 * Handles of the lost key may believe they hold it until they look; grants still on their way are not
 * handles yet: they are known by owner and token (every token up to the key's latest is tainted).
 */
function taint(s: KindsState, kind: Kind, r: string): void {
  const key = keyOf(kind, r);
  for (const x of s.holds) if (x.h.key === key) s.tainted.add(x.h);
  const token = Number(s.redis().getString(fenceOf(kind, r)) ?? "0");
  for (const o of kind === "mutex" ? s.redis().owners(key) : s.shared.live(key).keys())
    s.taintedGrants.set(`${key}\n${o}`, token);
}
