// The packed tarball, installed the way a user installs it: `npm pack`, then `npm install <tarball> ioredis`
// into scratch projects in the OS temp dir (outside the workspace, so nothing resolves to workspace
// sources), then a lock round trip against a real redis-server in each kind of project.
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
// @ts-expect-error: a plain .mjs helper without types, shared with lint.mjs
import { cleanEnv, packLibrary } from "./pack.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const tsc = require.resolve("typescript/bin/tsc");
// The workspace's own versions, so installs are served from the npm cache.
const versions = {
  ioredis: (require("ioredis/package.json") as { version: string }).version,
  pg: (require("pg/package.json") as { version: string }).version,
  typesNode: (require("@types/node/package.json") as { version: string }).version,
};

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}
function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: cleanEnv(env), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
function ok(r: Result, what: string): Result {
  if (r.code !== 0) throw new Error(`${what} exited with ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r;
}

let tmp = "";
let tarball = "";

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "lockyard-consumer-"));
  // prepack cleans dist/ and builds, so the tarball holds exactly what the sources compile to.
  tarball = packLibrary(tmp);
}, 180_000);

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function project(kind: string, type: "module" | "commonjs", dependencies: Record<string, string>) {
  const dir = path.join(tmp, kind);
  cpSync(path.join(here, "fixtures", kind), dir, { recursive: true });
  writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify({ name: `consumer-${kind}`, private: true, type, dependencies }, null, 2),
  );
  ok(
    await run(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error"],
      dir,
    ),
    `npm install in ${kind}`,
  );
  return dir;
}

async function roundTrip(dir: string, entry: string, kind: string) {
  const r = ok(await run(process.execPath, [entry], dir, { REDIS_URL: inject("redisUrl") }), `${kind} run`);
  const last = JSON.parse(r.stdout.trim().split("\n").at(-1) ?? "{}") as { ok?: boolean; kind?: string };
  expect(last).toMatchObject({ ok: true, kind });
  return r;
}

describe("the packed @lockyard/lock", () => {
  it("ships the build, its types, LICENSE, CHANGELOG and README, and no sources, tests or source maps", async () => {
    const files = ok(await run("tar", ["tzf", tarball], tmp), "tar")
      .stdout.trim()
      .split("\n");
    for (const f of [
      "package.json",
      "LICENSE",
      "CHANGELOG.md",
      "README.md",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/pg.js",
      "dist/pg.d.ts",
      "dist/backend.js",
      "dist/backend.d.ts",
      "dist/otel.js",
      "dist/otel.d.ts",
    ])
      expect(files).toContain(`package/${f}`);
    expect(files.filter((f) => /\.map$|^package\/(src|test|consumer-test)\//.test(f))).toEqual([]);
    const pkg = JSON.parse(
      ok(await run("tar", ["xzOf", tarball, "package/package.json"], tmp), "tar").stdout,
    ) as Record<string, unknown>;
    expect(pkg).toMatchObject({ publishConfig: { access: "public" }, engines: { node: ">=20.19" } });
    expect(pkg.devDependencies).toBeDefined(); // ignored on install; peers are what users see
    expect(pkg.peerDependenciesMeta).toEqual({
      "@opentelemetry/api": { optional: true },
      ioredis: { optional: true },
      pg: { optional: true },
    });
  });

  it("works in an ESM TypeScript project (nodenext): typechecks with tsc, then runs", async () => {
    const dir = await project("esm-ts", "module", {
      "@lockyard/lock": `file:${tarball}`,
      ioredis: versions.ioredis,
      "@types/node": versions.typesNode,
    });
    ok(await run(process.execPath, [tsc, "-p", "tsconfig.json"], dir), "tsc");
    await roundTrip(dir, "dist/main.js", "esm-ts");
  }, 120_000);

  it("works in an ESM JavaScript project", async () => {
    const dir = await project("esm-js", "module", {
      "@lockyard/lock": `file:${tarball}`,
      ioredis: versions.ioredis,
    });
    await roundTrip(dir, "main.js", "esm-js");
  }, 120_000);

  it("works from CommonJS with require() (Node's require(esm); no separate CJS build)", async () => {
    const dir = await project("cjs", "commonjs", {
      "@lockyard/lock": `file:${tarball}`,
      ioredis: versions.ioredis,
    });
    await roundTrip(dir, "main.js", "cjs");
  }, 120_000);

  it("loads @lockyard/lock/pg in a project that has pg and no ioredis", async () => {
    const dir = await project("pg-only", "module", {
      "@lockyard/lock": `file:${tarball}`,
      pg: versions.pg,
    });
    await roundTrip(dir, "main.js", "pg-only");
  }, 120_000);
});
