// When the Sentinels saw the primary go down and replaced it: the first +sdown, +odown and +switch-master
// any of them published about a master, on the test's performance.now() clock.
import { Redis } from "ioredis";

export type FailoverStep = "+sdown" | "+odown" | "+switch-master";
const STEPS: FailoverStep[] = ["+sdown", "+odown", "+switch-master"];

export interface SentinelEvents {
  at: Partial<Record<FailoverStep, number>>;
  /** Resolves with the time of the first +switch-master. */
  switched: Promise<number>;
  close(): void;
}

export async function watchSentinels(sentinels: { host: string; port: number }[]): Promise<SentinelEvents> {
  const at: SentinelEvents["at"] = {};
  let onSwitch: (t: number) => void = () => {};
  const switched = new Promise<number>((resolve) => {
    onSwitch = resolve;
  });
  const subs = sentinels.map((s) => new Redis(s.port, s.host, { lazyConnect: true }));
  for (const sub of subs) {
    sub.on("error", () => {});
    sub.on("message", (channel: FailoverStep, message: string) => {
      // "+sdown" and "+odown" are published for replicas and Sentinels too: only the master's count.
      // ("+switch-master" names the master group: "<name> <old ip> <old port> <new ip> <new port>".)
      const aboutMaster = channel === "+switch-master" || message.startsWith("master ");
      if (!aboutMaster || at[channel] !== undefined) return;
      at[channel] = performance.now();
      if (channel === "+switch-master") onSwitch(at[channel]);
    });
  }
  await Promise.all(subs.map((sub) => sub.subscribe(...STEPS)));
  const close = () => {
    for (const sub of subs) sub.disconnect();
  };
  return { at, switched, close };
}
