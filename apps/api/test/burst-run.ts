import { createApiClient } from "../src/client.js";
import type { AppRouter, RouterInputs } from "../src/index.js";
import type { BurstReport, RunEvent } from "../src/types.js";

const client = (url: string) => createApiClient<AppRouter>(url);

/** Starts a burst (a mutation) and watches it (a subscription) to its report. */
export async function burst(
  url: string,
  input: RouterInputs["demo"]["burst"]["start"],
): Promise<{ events: RunEvent[]; report: BurstReport }> {
  const { runId } = await client(url).demo.burst.start.mutate(input);
  return new Promise((resolve, reject) => {
    const events: RunEvent[] = [];
    const sub = client(url).demo.runs.watch.subscribe(
      { runId },
      {
        onData({ data: e }) {
          events.push(e);
          if (e.type === "report") {
            sub.unsubscribe();
            resolve({ events, report: e });
          } else if (e.type === "failed") {
            sub.unsubscribe();
            reject(new Error(e.message));
          }
        },
        onError(err) {
          sub.unsubscribe();
          reject(err);
        },
      },
    );
  });
}
