/** The cause of a CONFLICT from demo.burst.start: the errorFormatter puts `runId` into the error's data. */
export class BurstRunningError extends Error {
  override readonly name = "BurstRunningError";
  constructor(readonly runId: string) {
    super(`a burst is running (run ${runId}); watch it with demo.runs.watch or try again when it ends`);
  }
}
