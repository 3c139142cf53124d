// Setup file of vitest.ioredis5.config.ts: proves that "ioredis" really resolves to ioredis 5 in this run.
import { createRequire } from "node:module";
import * as aliased from "ioredis";
import * as v5 from "ioredis5";

const { version } = createRequire(import.meta.url)("ioredis5/package.json") as { version: string };
if (aliased.Redis !== v5.Redis || !version.startsWith("5.")) {
  throw new Error(`expected "ioredis" to resolve to ioredis 5 (ioredis5 is ${version})`);
}
