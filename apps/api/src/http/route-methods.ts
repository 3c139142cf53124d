import type { OpenAPIObject } from "trpc-to-openapi";
import { RestRequestError } from "./rest-error.js";

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

/**
 * The methods the document's route at `path` answers, or undefined for a path that is no route. Paths match as
 * trpc-to-openapi matches them: any case, no trailing slash, `{param}` one segment.
 */
export function routeMethods(doc: OpenAPIObject): (path: string) => string[] | undefined {
  const routes = Object.entries(doc.paths ?? {}).map(([path, item]) => ({
    pattern: new RegExp(
      `^${trimSlashes(path)
        .split(/\{[^/}]+\}/)
        .map(escapeRegExp)
        .join("[^/]+")}$`,
      "i",
    ),
    methods: Object.keys(item as object)
      .filter((key) => HTTP_METHODS.has(key))
      .map((key) => key.toUpperCase()),
  }));
  return (path) => {
    const pathname = pathnameOf(path);
    return routes.find((r) => r.pattern.test(pathname))?.methods;
  };
}

/** Where the adapter would answer 404 "Not found", as if the route did not exist. */
export function methodNotAllowed(method: string, path: string, allowed: string[]): RestRequestError {
  return new RestRequestError(405, `${method} ${path} is not allowed: use ${allowed.join(" or ")}`, {
    allow: allowed.join(", "),
  });
}

/** As the adapter reads it; a path it cannot read matches no route and is left to the adapter. */
function pathnameOf(path: string): string {
  try {
    return trimSlashes(new URL(path.startsWith("/") ? `http://127.0.0.1${path}` : path).pathname);
  } catch {
    return "";
  }
}

function trimSlashes(path: string): string {
  return `/${path.replace(/^\/|\/$/g, "")}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
