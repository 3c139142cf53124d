import type { IncomingMessage } from "node:http";
import { type Fields, readJsonBody } from "./json-body.js";
import { RestRequestError } from "./rest-error.js";

/**
 * A REST POST's input: its query string's fields and its JSON body's, together. The seed posts
 * `/api/stock/deduct?productId=1001` (ASP.NET's `[FromQuery]`) and `/api/order/submit` with a body
 * (`[FromBody]`), and a client may mix them; the adapter reads a POST's body only. A field given in both places
 * must have the same value in both.
 */
export async function readPostInput(
  req: IncomingMessage,
  query: URLSearchParams,
  maxBodySize: number,
): Promise<Fields> {
  const fromQuery = queryFields(query);
  const body = await readJsonBody(req, maxBodySize);
  if (!body) return fromQuery;
  for (const [key, value] of Object.entries(fromQuery)) {
    if (Object.hasOwn(body, key) && !sameValue(body[key], value)) {
      throw new RestRequestError(
        400,
        `${key}: given as ${show(value)} in the query string and as ${show(body[key])} in the body; ` +
          "give it once, or the same in both",
      );
    }
  }
  // fromEntries defines every key as the object's own, `__proto__` included (refused later as unknown).
  return Object.fromEntries([...Object.entries(fromQuery), ...Object.entries(body)]);
}

function queryFields(query: URLSearchParams): Record<string, string> {
  const fields: [string, string][] = [];
  for (const key of new Set(query.keys())) {
    const values = query.getAll(key);
    if (values.length > 1) {
      throw new RestRequestError(
        400,
        `${key}: given ${values.length} times in the query string; give it once`,
      );
    }
    fields.push([key, values[0] ?? ""]);
  }
  return Object.fromEntries(fields);
}

/** `productId=1001` and `"productId": 1001` name the same product. */
function sameValue(fromBody: unknown, fromQuery: string): boolean {
  return (typeof fromBody === "string" || typeof fromBody === "number") && String(fromBody) === fromQuery;
}

function show(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 40 ? `${json.slice(0, 40)}…` : json;
}
