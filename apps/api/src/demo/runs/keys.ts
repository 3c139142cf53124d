/** Redis keys of demo runs. A run's keys share the `{runId}` hash tag, so a Cluster keeps them on one slot. */
export const runMetaKey = (runId: string) => `demo:run:{${runId}}`;
export const runEventsKey = (runId: string) => `demo:run:{${runId}}:events`;
/** Holds the running burst's run id: one burst at a time across every instance. */
export const BURST_GUARD_KEY = "demo:burst:running";
/** Sorted set of running scenario run ids, scored by when their slot expires. */
export const SCENARIO_SLOTS_KEY = "demo:scenarios:{slots}";
/** The same hash tag as the global set: the slot script touches both (one Cluster slot). */
export const scenarioClientSlotsKey = (client: string) => `demo:scenarios:{slots}:client:${client}`;
/** The start barrier of an unsafe burst on one product (see stock/barrier.ts). */
export const barrierKey = (productId: string) => `demo:barrier:{${productId}}`;
