import { demoRouter } from "./router/demo.js";
import { jobsRouter } from "./router/jobs.js";
import { locksRouter } from "./router/locks.js";
import { orderRouter } from "./router/order.js";
import { stockRouter } from "./router/stock.js";
import { systemRouter } from "./router/system.js";
import { createCallerFactory, router } from "./trpc.js";

export const appRouter = router({
  system: systemRouter,
  stock: stockRouter,
  order: orderRouter,
  locks: locksRouter,
  demo: demoRouter,
  jobs: jobsRouter,
});

export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);
