import { z } from "zod";

const DEFAULT_API_URLS = "http://127.0.0.1:4001,http://127.0.0.1:4002";

const schema = z.object({
  API_URLS: z
    .string()
    .default(DEFAULT_API_URLS)
    .transform((s) =>
      s
        .split(",")
        .map((u) => u.trim().replace(/\/+$/, ""))
        .filter((u) => u.length > 0),
    )
    .pipe(z.array(z.url({ protocol: /^https?$/ })).min(1, "API_URLS must list at least one URL")),
});

export type ServerEnv = z.output<typeof schema>;

let cached: ServerEnv | undefined;

/**
 * Server-only: the environment, parsed once at request time (never inlined at build time),
 * so the same build works whatever ports the API runs on.
 */
export function serverEnv(): ServerEnv {
  if (!cached) {
    const result = schema.safeParse({ API_URLS: process.env.API_URLS || undefined });
    if (!result.success) throw new Error(`invalid environment:\n${z.prettifyError(result.error)}`);
    cached = result.data;
  }
  return cached;
}
