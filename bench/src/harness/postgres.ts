import pg from "pg";
import { repoPath } from "./repo.js";

export interface BenchPostgres {
  readonly url: string;
  /** Undefined when the bench uses DATABASE_URL and started nothing. */
  readonly pid: number | undefined;
  /** Where it came from, for the settings text. */
  readonly source: string;
  stop(): Promise<void>;
}

interface PostgresLib {
  startPostgres(opts?: {
    quiet?: boolean;
  }): Promise<{ url: string; pid: number | undefined; stop(): Promise<void> }>;
}

/**
 * The PostgreSQL that Lockyard's PostgreSQL backend is measured on: DATABASE_URL when set, otherwise a
 * throwaway cluster started by the shared helper (scripts/lib/postgres.mjs: initdb into a temp dir,
 * loopback only, stopped by PID). Rejects with the reason when PostgreSQL is not installed.
 */
export async function startBenchPostgres(): Promise<BenchPostgres> {
  const external = process.env.DATABASE_URL;
  if (external) {
    await probe(external);
    return { url: external, pid: undefined, source: "DATABASE_URL", stop: async () => {} };
  }
  const lib = (await import(repoPath("scripts/lib/postgres.mjs"))) as PostgresLib;
  const pg = await lib.startPostgres();
  return {
    url: pg.url,
    pid: pg.pid,
    source:
      "a PostgreSQL the bench started (initdb into a temp dir; fsync, synchronous_commit and full_page_writes off)",
    stop: () => pg.stop(),
  };
}

/** Fails now, with the reason, rather than halfway through a scenario. */
async function probe(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (err) {
    throw new Error(`DATABASE_URL does not answer: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    await client.end().catch(() => {});
  }
}
