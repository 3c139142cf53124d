import type { IncomingMessage, ServerResponse } from "node:http";
import { createOpenApiNodeHttpHandler } from "trpc-to-openapi";
import { createContextFactory, type Services } from "../context.js";
import { seedRouter } from "../router/seed.js";
import { serveDocs } from "./docs.js";
import { plain } from "./headers.js";
import { createOpenApiDocument } from "./openapi.js";
import { readPostInput } from "./post-input.js";
import { withRequestSignal } from "./request-signal.js";
import { RestRequestError } from "./rest-error.js";
import { methodNotAllowed, routeMethods } from "./route-methods.js";

/**
 * Everything under `/api`: the seed's REST routes (router/seed.ts through trpc-to-openapi),
 * `/api/openapi.json` and the Swagger UI page at `/api/docs`.
 */
export function createRestHandler(services: Services, { maxBodySize }: { maxBodySize: number }) {
  const openApi = createOpenApiDocument();
  const document = JSON.stringify(openApi);
  const allowedMethods = routeMethods(openApi);
  const contextFor = createContextFactory(services);
  const routes = createOpenApiNodeHttpHandler({
    router: seedRouter,
    maxBodySize,
    createContext: async (opts) => withRequestSignal(await contextFor(opts), opts.info.signal),
    onError({ error, path }) {
      if (error.code === "INTERNAL_SERVER_ERROR")
        services.logger.error({ err: error.cause ?? error, path }, "request failed");
    },
  });
  const handle = async (req: IncomingMessage & { body?: unknown }, res: ServerResponse): Promise<void> => {
    const [path = "/", query = ""] = (req.url ?? "/").split(/\?(.*)/s, 2);
    const method = req.method ?? "GET";
    const pages = path === "/api/openapi.json" || /^\/api\/docs(\/|$)/.test(path);
    const allowed = pages ? ["GET", "HEAD"] : withHead(allowedMethods(path));
    try {
      if (allowed && !allowed.includes(method)) throw methodNotAllowed(method, path, allowed);
      if (!allowed && !ADAPTER_METHODS.has(method))
        throw new RestRequestError(404, `no route ${path}; the routes are listed in /api/openapi.json`);
      if (path === "/api/openapi.json") {
        res.writeHead(200, { "content-type": "application/json", "cache-control": "no-cache" }).end(document);
        return;
      }
      if (serveDocs(res, path)) return;
      // Answered as a GET: Node leaves out the body of a response to a HEAD, whatever the method says now.
      if (method === "HEAD") req.method = "GET";
      if (allowed && method === "POST") {
        // The adapter takes a body already in `req.body` as the input, and then reads nothing itself.
        req.body = await readPostInput(req, new URLSearchParams(query), maxBodySize);
        req.headers["content-type"] = "application/json";
      }
    } catch (err) {
      if (!(err instanceof RestRequestError)) throw err;
      plain(res, err.status, { message: err.message }, err.headers);
      return;
    }
    await routes(req, seedShapedErrors(res));
  };
  return (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((err: unknown) => {
      services.logger.error({ err, url: req.url }, "request failed");
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: "Internal server error" }));
    });
  };
}

/** On a path that is no route, the methods the adapter answers (with its 404); others get a 404 here. */
const ADAPTER_METHODS = new Set(["GET", "HEAD", "POST"]);

/** A GET route answers HEAD too. */
function withHead(methods: string[] | undefined): string[] | undefined {
  return methods?.includes("GET") ? [...methods, "HEAD"] : methods;
}

/** Rewrites the adapter's error bodies (`{ message, code, issues }`) to the seed's `{ message }`. */
function seedShapedErrors(res: ServerResponse): ServerResponse {
  return new Proxy(res, {
    get(target, prop) {
      if (prop === "end") {
        return (body?: unknown) =>
          target.end(target.statusCode >= 400 && typeof body === "string" ? seedError(body) : body);
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
    set: (target, prop, value) => Reflect.set(target, prop, value, target),
  });
}

interface AdapterError {
  message?: unknown;
  issues?: { path?: PropertyKey[]; message?: string }[];
}

function seedError(body: string): string {
  let parsed: AdapterError;
  try {
    parsed = JSON.parse(body) as AdapterError;
  } catch {
    return body;
  }
  // A validation error says which field is wrong and why, rather than "Input validation failed".
  const issues = Array.isArray(parsed.issues) ? parsed.issues : [];
  const message =
    issues.length > 0
      ? issues
          .map((i) => (i.path?.length ? `${i.path.map(String).join(".")}: ${i.message}` : i.message))
          .join("; ")
      : String(parsed.message ?? "error");
  return JSON.stringify({ message });
}
