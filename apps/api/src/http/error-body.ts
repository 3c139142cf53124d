/** The paths server.ts hands to rest.ts: `/api/…`, where the seed's clients expect its error shape. */
export function isRestPath(url: string | undefined): boolean {
  return (url ?? "/").split("?", 1)[0]?.startsWith("/api/") ?? false;
}

/** An error's JSON body: the seed's `{ message }` under `/api/`, `{ error }` on the other paths. */
export function errorBody(url: string | undefined, message: string): { message: string } | { error: string } {
  return isRestPath(url) ? { message } : { error: message };
}
