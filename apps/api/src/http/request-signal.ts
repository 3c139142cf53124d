/**
 * trpc-to-openapi calls a REST route's procedure without the request's abort signal (its caller gets none),
 * so rest.ts hands the signal over on the context, under a symbol: spreads copy it, so a middleware that
 * extends the context keeps it.
 */
const SIGNAL = Symbol("request signal");

export function withRequestSignal<T extends object>(ctx: T, signal: AbortSignal): T {
  return Object.assign(ctx, { [SIGNAL]: signal });
}

/** The signal of the REST request whose context this is, aborted when its client goes away. */
export function requestSignal(ctx: object): AbortSignal | undefined {
  return (ctx as { [SIGNAL]?: AbortSignal })[SIGNAL];
}
