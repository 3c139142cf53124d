import type { IncomingMessage } from "node:http";
import { RestRequestError } from "./rest-error.js";

export type Fields = Record<string, unknown>;

/**
 * The REST inputs are flat objects of fields, so this is far more than they need, and it keeps the body away
 * from recursive code downstream: the adapter JSON.stringifies it, and 10 000 levels overflowed its stack.
 */
export const MAX_JSON_DEPTH = 16;

/**
 * A POST's JSON body as an object of fields, or null when it has none (no bytes, or only whitespace).
 * Anything else is refused with a RestRequestError saying what to send instead.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<Fields | null> {
  if (!hasBody(req)) return null;
  const type = req.headers["content-type"];
  if (!type || !/^application\/json\s*(;|$)/i.test(type)) {
    throw new RestRequestError(
      415,
      `a body needs content-type: application/json${type ? ` (got ${JSON.stringify(type)})` : ""}; ` +
        "or send the fields as query parameters, without a body",
    );
  }
  refuseUnreadable(req, type);
  const text = await readText(req, maxBytes);
  if (text.trim() === "") return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new RestRequestError(400, `the body is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new RestRequestError(
      400,
      `the JSON body must be an object of fields, like {"productId":1001}; got ${kindOf(value)}`,
    );
  }
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) {
    throw new RestRequestError(
      400,
      `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels; its fields take plain numbers and strings`,
    );
  }
  return value as Fields;
}

/**
 * The body is read as plain UTF-8 bytes: one compressed, or in another charset, would be read as something the
 * client did not send.
 */
function refuseUnreadable(req: IncomingMessage, type: string): void {
  const encoding = req.headers["content-encoding"]?.trim().toLowerCase();
  if (encoding && encoding !== "identity") {
    throw new RestRequestError(
      415,
      `content-encoding ${JSON.stringify(encoding)} is not decoded here: send the JSON body uncompressed`,
      { "accept-encoding": "identity" },
    );
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(type)?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    throw new RestRequestError(
      415,
      `a JSON body is read as UTF-8: send it as UTF-8, with charset=utf-8 or no charset (got charset=${charset})`,
    );
  }
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

/** Stops reading past `maxBytes` without destroying the socket, so the 413 still reaches the client. */
function readText(req: IncomingMessage, maxBytes: number): Promise<string> {
  const tooLarge = () =>
    new RestRequestError(413, `the body is larger than ${maxBytes} bytes`, { connection: "close" });
  if (Number(req.headers["content-length"]) > maxBytes) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err?: Error) => {
      req.off("data", onData).off("end", onEnd).off("error", onCutOff).off("close", onCutOff);
      if (err) {
        req.pause();
        reject(err);
        return;
      }
      try {
        resolve(new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks)));
      } catch {
        reject(new RestRequestError(400, "the body is not valid UTF-8"));
      }
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) done(tooLarge());
      else chunks.push(chunk);
    };
    const onEnd = () => done();
    const onCutOff = () => done(new RestRequestError(400, "the body could not be read to its end"));
    req.on("data", onData).on("end", onEnd).on("error", onCutOff).on("close", onCutOff);
  });
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

/** Walks with a stack of its own: recursion is what a deep body breaks. */
function nestsDeeperThan(value: object, maxDepth: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [node, depth] = item;
    if (typeof node !== "object" || node === null) continue;
    if (depth > maxDepth) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}
