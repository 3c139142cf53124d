import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { createContextFactory } from "./context.js";
import { env as readEnv } from "./env.js";
import { applyCors } from "./http/cors.js";
import { healthz, metrics } from "./http/health.js";
import { startJobs } from "./jobs/scheduler.js";
import { createLogger } from "./logger.js";
import { waitUntilReady } from "./redis.js";
import { appRouter } from "./root.js";
import { createServices } from "./services.js";

const MAX_BODY_BYTES = 64 * 1024;

const env = readEnv();
const logger = createLogger(env.LOG_LEVEL, env.INSTANCE_ID);
const { services, close, ready } = createServices(env, logger);
const origins = new Set(env.WEB_ORIGINS);

const trpc = createHTTPHandler({
  router: appRouter,
  basePath: "/trpc/",
  maxBodySize: MAX_BODY_BYTES,
  createContext: createContextFactory(services),
  onError({ error, path }) {
    if (error.code === "INTERNAL_SERVER_ERROR")
      logger.error({ err: error.cause ?? error, path }, "request failed");
  },
});

function route(req: IncomingMessage, res: ServerResponse) {
  if (applyCors(req, res, origins)) return;
  const path = (req.url ?? "/").split("?", 1)[0];
  if (path === "/healthz") return void healthz(res, services.redis, env.INSTANCE_ID);
  if (path === "/metrics") return void metrics(res, services.metrics.registry);
  if (path?.startsWith("/trpc/")) return trpc(req, res);
  res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not found" }));
}

const server = createServer(route);
// SSE subscriptions are long-lived; only idle sockets should time out.
server.requestTimeout = 0;
server.headersTimeout = 10_000;

const jobs = startJobs({
  redis: services.redis,
  locks: services.locks,
  logger,
  metrics: services.metrics,
  instanceId: env.INSTANCE_ID,
  intervalMs: env.JOB_INTERVAL_MS,
});

// The postgres mode's first connection attempt is bounded by the pool's connect timeout.
const [redisReady] = await Promise.all([waitUntilReady(services.redis, 3_000), ready]);
if (!redisReady) {
  logger.warn({ redis: env.REDIS_URL }, "redis not reachable yet; serving 503s until it is");
}
server.listen(env.PORT, env.HOST, () => {
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : env.PORT;
  logger.info({ port, host: env.HOST, apiUrls: env.API_URLS }, `api listening on http://${env.HOST}:${port}`);
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down");
  jobs.stop();
  // Let in-flight requests finish; open SSE streams and keep-alive sockets would hold close() forever.
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const grace = new Promise<void>((resolve) => setTimeout(resolve, 2_000).unref());
  await Promise.race([closed, grace]);
  server.closeAllConnections();
  await close();
  process.exit(0);
}
process.once("SIGTERM", () => void shutdown("SIGTERM"));
process.once("SIGINT", () => void shutdown("SIGINT"));
