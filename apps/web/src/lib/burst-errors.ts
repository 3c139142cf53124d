/**
 * "103 of 200 requests failed", or null when none did: a verdict on stock says nothing about requests
 * that never reached it, so it carries this beside it.
 */
export function failedRequestsNote(r: { errors: number; requests: number }): string | null {
  if (r.errors === 0) return null;
  return `${r.errors} of ${r.requests} ${r.requests === 1 ? "request" : "requests"} failed`;
}
