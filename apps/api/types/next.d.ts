// trpc-to-openapi's declarations import `next` for its Next.js adapter, which the API does not use. In this
// monorepo `next` is installed (for apps/web), and its global declarations (a required NODE_ENV in
// ProcessEnv, among others) would leak into the API's types. tsconfig `paths` points `next` here instead.
import type { IncomingMessage, ServerResponse } from "node:http";

export type NextApiRequest = IncomingMessage & { body?: unknown; query?: Record<string, unknown> };
export type NextApiResponse = ServerResponse;
