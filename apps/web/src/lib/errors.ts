import { TRPCClientError } from "@trpc/client";

const words: Record<string, string> = {
  BAD_REQUEST: "The request was rejected as invalid",
  CONFLICT: "Busy: another request holds it right now",
  TOO_MANY_REQUESTS: "Too many requests; try again shortly",
  SERVICE_UNAVAILABLE: "The API cannot reach Redis",
  UNAUTHORIZED: "This needs the admin token",
  NOT_FOUND: "Not found",
  TIMEOUT: "The API took too long to answer",
  INTERNAL_SERVER_ERROR: "The API failed unexpectedly",
};

export interface DescribedError {
  code: string;
  text: string;
}

/** The tRPC error code (from `data.code`) and a sentence a person can act on. */
export function describeError(err: unknown): DescribedError {
  if (err instanceof TRPCClientError) {
    const data = err.data as { code?: unknown } | undefined | null;
    const code = typeof data?.code === "string" ? data.code : "NETWORK";
    if (code === "NETWORK") return { code, text: "Cannot reach the API. Is it running?" };
    const prefix = words[code] ?? code;
    const detail = err.message && err.message !== code ? err.message : "";
    return { code, text: detail && detail !== prefix ? `${prefix}: ${detail}` : prefix };
  }
  if (err instanceof Error) return { code: "ERROR", text: err.message };
  return { code: "ERROR", text: String(err) };
}

export function errorCode(err: unknown): string {
  return describeError(err).code;
}
