import { createServer, type IncomingMessage, maxHeaderSize, type ServerResponse } from "node:http";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { envOrExit, exitWith, listenFailure } from "./boot.js";
import { createContextFactory } from "./context.js";
import { answerParserRefusals } from "./http/client-error.js";
import { ClientLimits } from "./http/client-limits.js";
import { applyCors } from "./http/cors.js";
import { guardRequest } from "./http/guard.js";
import { baseHeaders } from "./http/headers.js";
import { healthz, metrics } from "./http/health.js";
import { refuseProbeMethod } from "./http/probes.js";
import { readyz } from "./http/ready.js";
import { createRestHandler } from "./http/rest.js";
import { traced } from "./http/trace.js";
import { startJobs } from "./jobs/scheduler.js";
import { createHttpLogger, createLogger, recordInternalError } from "./logger.js";
import { waitUntilReady } from "./redis.js";
import { appRouter } from "./root.js";
import { createServices } from "./services.js";
import { startTelemetry } from "./telemetry.js";

const MAX_BODY_BYTES = 64 * 1024;

const env = envOrExit();
const logger = createLogger(env.LOG_LEVEL, env.INSTANCE_ID);
const telemetry = startTelemetry(env);
const { services, close, ready, redlockClients } = createServices(env, logger, telemetry);
const httpLog = createHttpLogger(logger);
const readiness = {
  instanceId: env.INSTANCE_ID,
  redis: services.redis,
  redlockClients,
  postgresConfigured: env.DATABASE_URL !== undefined,
  postgres: () => services.postgres,
  requires: env.READY_REQUIRES,
};
const origins = new Set(env.WEB_ORIGINS);

const trpc = createHTTPHandler({
  router: appRouter,
  basePath: "/trpc/",
  maxBodySize: MAX_BODY_BYTES,
  // A batch runs every call in it: without a cap one GET could run thousands of procedures.
  maxBatchSize: env.MAX_BATCH_SIZE,
  createContext: createContextFactory(services),
  onError({ error, req }) {
    // Logged once, by the request's log line (logger.ts), with its request id.
    if (error.code === "INTERNAL_SERVER_ERROR") recordInternalError(req, error.cause ?? error);
  },
});

// The seed's REST routes, /api/openapi.json and /api/docs (http/rest.ts).
const rest = createRestHandler(services, { maxBodySize: MAX_BODY_BYTES });

const limits = new ClientLimits({
  connections: env.MAX_CONNECTIONS_PER_CLIENT,
  streams: env.MAX_STREAMS_PER_CLIENT,
});
const streamPaths = new Set(
  Object.entries(appRouter._def.procedures as Record<string, { _def?: { type?: string } }>)
    .filter(([, p]) => p._def?.type === "subscription")
    .map(([path]) => path),
);
const guard = {
  host: { port: () => listeningPort(), allowed: env.ALLOWED_HOSTS, apiUrls: env.API_URLS },
  origins,
  limits,
  streamPaths,
  inFlight: services.drain,
};

function route(req: IncomingMessage, res: ServerResponse) {
  httpLog(req, res);
  baseHeaders(res);
  if (guardRequest(req, res, guard)) return;
  // Before CORS: an OPTIONS on a probe is a 405 naming GET and HEAD, not a preflight.
  if (refuseProbeMethod(req, res)) return;
  if (applyCors(req, res, origins)) return;
  const path = (req.url ?? "/").split("?", 1)[0];
  if (path === "/healthz") return void healthz(res, env.INSTANCE_ID);
  if (path === "/readyz") return void readyz(res, readiness);
  if (path === "/metrics") return void metrics(req, res, services.metrics.registry, env.ADMIN_TOKEN);
  if (path?.startsWith("/trpc/")) return trpc(req, res);
  if (path?.startsWith("/api/")) return rest(req, res);
  // Every /api error is { message } (README); the rest of the server keeps its { error }.
  const body =
    path === "/api"
      ? { message: "not found; the routes are listed in /api/openapi.json" }
      : { error: "not found" };
  res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify(body));
}

// requestTimeout bounds receiving a request (headers and body), not the response, so SSE streams are
// unaffected while a stalled upload (slowloris) is cut off. Checked every second rather than every 30 s.
const server = createServer(
  {
    requestTimeout: env.REQUEST_TIMEOUT_MS,
    headersTimeout: Math.min(env.HEADERS_TIMEOUT_MS, env.REQUEST_TIMEOUT_MS),
    keepAliveTimeout: env.KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: 1_000,
  },
  traced(telemetry?.tracer, route),
);
limits.attach(server);
answerParserRefusals(server, {
  headersTimeoutMs: Math.min(env.HEADERS_TIMEOUT_MS, env.REQUEST_TIMEOUT_MS),
  requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
  maxHeaderBytes: maxHeaderSize,
});

// Read once listening (PORT=0 picks one): server.address() per request cost ~25 µs of every request's CPU.
let boundPort: number | undefined;
function listeningPort(): number {
  if (boundPort !== undefined) return boundPort;
  const addr = server.address();
  if (typeof addr === "object" && addr) boundPort = addr.port;
  return boundPort ?? env.PORT;
}

const jobs = startJobs({
  redis: services.redis,
  locks: services.locks,
  logger,
  metrics: services.metrics,
  instanceId: env.INSTANCE_ID,
  intervalMs: env.JOB_INTERVAL_MS,
  orderRetentionMs: env.ORDER_RETENTION_HOURS * 3_600_000,
});

// The postgres mode's first connection attempt is bounded by the pool's connect timeout.
const [redisReady] = await Promise.all([waitUntilReady(services.redis, 3_000), ready]);
if (!redisReady) {
  logger.warn({ redis: services.config.redisUrl }, "redis not reachable yet; serving 503s until it is");
}
// Before listening, the only error the server emits is listen's own (EADDRINUSE, EACCES, …).
const onListenError = (err: NodeJS.ErrnoException) => exitWith(listenFailure(err, env.HOST, env.PORT));
server.once("error", onListenError);
server.listen(env.PORT, env.HOST, () => {
  server.off("error", onListenError);
  const port = listeningPort();
  logger.info({ port, host: env.HOST, apiUrls: env.API_URLS }, `api listening on http://${env.HOST}:${port}`);
});

/** In-flight requests get this long to finish; then their waits are stopped and they answer 503. */
const GRACE_MS = 2_000;
/** How long those answers (and writes already sent, bounded by Redis's command timeout) may take. */
const ANSWER_MS = 3_000;

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal, inFlight: services.drain.inFlight }, "shutting down");
  jobs.stop();
  // No new connections; open SSE streams and keep-alive sockets would hold close() forever.
  server.close();
  server.closeIdleConnections();
  if (!(await services.drain.idle(GRACE_MS))) {
    logger.info(
      { inFlight: services.drain.inFlight, waiting: services.drain.watching },
      "stopping the waits of requests still in flight",
    );
    services.drain.stop(env.INSTANCE_ID);
    if (!(await services.drain.idle(ANSWER_MS))) {
      logger.warn(
        { inFlight: services.drain.inFlight },
        "requests still unanswered; closing their connections",
      );
    }
  }
  server.closeAllConnections();
  await close();
  // After close(): it ends the open hold spans, which the flush then sends.
  await telemetry?.shutdown();
  process.exit(0);
}
process.once("SIGTERM", () => void shutdown("SIGTERM"));
process.once("SIGINT", () => void shutdown("SIGINT"));
