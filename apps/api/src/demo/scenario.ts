import type { Context } from "../context.js";
import type { ScenarioName } from "../schemas.js";
import type { ScenarioEvent } from "../types.js";
import { crash } from "./scenarios/crash.js";
import { fencing } from "./scenarios/fencing.js";
import { misdelete } from "./scenarios/misdelete.js";
import { reentrancy } from "./scenarios/reentrancy.js";
import type { ScenarioScript } from "./scenarios/types.js";
import { watchdog } from "./scenarios/watchdog.js";
import { Timeline } from "./timeline.js";

const scripts: Record<ScenarioName, ScenarioScript> = { watchdog, reentrancy, misdelete, fencing, crash };

/** Runs one scenario script and streams its timeline; stops the script when the client goes away. */
export async function* runScenario(
  ctx: Context,
  req: { name: ScenarioName; timeScale: number },
  signal: AbortSignal | undefined,
): AsyncGenerator<ScenarioEvent> {
  const abort = new AbortController();
  const onAbort = () => abort.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  const tl = new Timeline(ctx, req.name, req.timeScale, abort.signal);
  const script = scripts[req.name];
  const running = script(tl).then(
    (r) => tl.finish(r.ok, r.summary),
    async (err: unknown) => {
      if (abort.signal.aborted) return tl.queue.end();
      const message = err instanceof Error ? err.message : String(err);
      ctx.logger.warn({ err, scenario: req.name }, "scenario failed");
      await tl.emit("system", "error", message);
      await tl.finish(false, message);
    },
  );
  try {
    yield* tl.queue;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    abort.abort();
    await running;
  }
}
