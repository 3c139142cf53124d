/**
 * One lock implementation under test, created for one profile:
 * - recommended: the library's own defaults (what its README tells you to use);
 * - seed: the seed .NET design's settings, retry every 100 ms and give up after 5 s;
 * - watchdog: a short lease renewed automatically every lease/3 until release.
 */
export type Profile = "recommended" | "seed" | "watchdog";

export interface ProfileOptions {
  profile: Profile;
  /** Only for the watchdog profile: the lease, renewed every lease/3. */
  leaseMs?: number;
}

export interface Held {
  release(): Promise<void>;
}

export interface Contender {
  /** Human-readable settings, printed under the tables so every peer's configuration is on record. */
  readonly settings: string;
  /** Resolves with the held lock, or null when the library gave up waiting (a timeout). */
  acquire(key: string): Promise<Held | null>;
  close(): Promise<void>;
}

export interface ContenderFactory {
  /** Stable id used in JSON and as the connection-name prefix. */
  readonly id: string;
  /** Name shown in the tables. */
  readonly label: string;
  create(redisUrl: string, options: ProfileOptions): Promise<Contender>;
}
