// The Docker images without a Docker engine (there is none on the machines that run the tests): the
// runtime stages of the Dockerfile are assembled on disk by following their own COPY --from lines, from a
// fresh clone built the way the `build` stage builds (NEXT_OUTPUT=standalone) and from the `api-deps`
// stage's own `npm ci` command run on the manifests the `deps` stage copies. Then each image's CMD runs
// with the stage's ENV, its HEALTHCHECK command must exit 0, the API must be ready on a real Redis and the
// dashboard must serve its page and static assets. What this cannot show: the base image, USER, and the
// build running inside Docker itself.
import { execFileSync, spawn } from "node:child_process";
import { cpSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { freePort, waitForPort } from "../../scripts/lib/ports.mjs";
// @ts-expect-error plain .mjs helper without types
import { startRedis } from "../../scripts/lib/redis.mjs";
// @ts-expect-error plain .mjs helper without types
import { freshClone } from "../lib-clone.mjs";
// @ts-expect-error plain .mjs helper without types
import { parseDockerfile, stageEnv } from "./dockerfile.mjs";

interface Ins {
  op: string;
  args: string;
}
interface Stage {
  name: string;
  body: Ins[];
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const { stages } = parseDockerfile(readFileSync(path.join(root, "Dockerfile"), "utf8")) as {
  stages: Stage[];
};
const stage = (name: string) => {
  const s = stages.find((x) => x.name === name);
  if (!s) throw new Error(`Dockerfile has no stage ${name}`);
  return s;
};
const runArgs = (s: Stage) => s.body.filter((x) => x.op === "RUN").map((x) => x.args);
const json = (s: Stage, op: string) =>
  JSON.parse(s.body.find((x) => x.op === op)?.args.replace(/^.*?CMD\s+/, "") ?? "null");

// Without vitest's NODE_ENV=test: the image's build stage sets none, and NODE_ENV is one of turbo's global hash
// inputs, so with it every package missed the builds `npm test` had just cached.
const env = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== "NODE_ENV"),
);
let clone: { tmp: string; dir: string; remove(): void };
let redis: { url: string; stop(): Promise<void> };
const images: Record<string, string> = {};
const children: ReturnType<typeof spawn>[] = [];

/** `COPY --from=<stage> [--chown=…] /app/<src> <dest>` lines of a runtime stage, applied to a directory. */
function assemble(s: Stage, sources: Record<string, string>, into: string) {
  mkdirSync(into, { recursive: true });
  for (const ins of s.body.filter((x) => x.op === "COPY")) {
    const from = ins.args.match(/--from=(\S+)/)?.[1];
    const [rawSrc, rawDest] = ins.args.split(/\s+/).filter((a) => !a.startsWith("--"));
    if (!from || rawSrc === undefined || rawDest === undefined)
      throw new Error(`unexpected COPY ${ins.args}`);
    const src = rawSrc.replace(/^\/app\/?/, "");
    const base = sources[from];
    if (!base) throw new Error(`no source for stage ${from}`);
    // Docker: a file copied to a destination ending in "/" lands inside it; a directory's contents are copied.
    const isFile = statSync(path.join(base, src)).isFile();
    const dest = rawDest.replace(/^\.\/?/, "");
    const target =
      isFile && rawDest.endsWith("/") ? path.join(into, dest, path.basename(src)) : path.join(into, dest);
    mkdirSync(path.dirname(target), { recursive: true });
    cpSync(path.join(base, src), target, { recursive: true, verbatimSymlinks: true });
  }
}

/** Symlinks inside `dir` whose target is outside it: they would dangle in the image. */
function escapingLinks(dir: string): string[] {
  const bad: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = path.join(d, e);
      const st = lstatSync(p);
      if (st.isSymbolicLink()) {
        const t = path.resolve(path.dirname(p), readlinkSync(p));
        if (!t.startsWith(dir + path.sep)) bad.push(`${path.relative(dir, p)} -> ${t}`);
      } else if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return bad;
}

function start(name: string, s: Stage, extra: Record<string, string>) {
  const cmd = json(s, "CMD") as string[];
  const child = spawn(cmd[0] === "node" ? process.execPath : cmd[0]!, cmd.slice(1), {
    cwd: images[name],
    env: { PATH: process.env.PATH, ...stageEnv(s), ...extra },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    out += d;
  });
  children.push(child);
  return () => out;
}

async function healthcheck(s: Stage, port: number): Promise<number | null> {
  const cmd = json(s, "HEALTHCHECK") as string[];
  const child = spawn(process.execPath, cmd.slice(1), {
    env: { PATH: process.env.PATH, ...stageEnv(s), PORT: String(port) },
  });
  return new Promise((resolve) => child.on("exit", resolve));
}

beforeAll(async () => {
  clone = freshClone(root, "lockyard-images-");
  // The build stage's command, in the clone (turbo reuses this checkout's cache when the hashes match).
  const [build] = runArgs(stage("build"));
  execFileSync("sh", ["-c", build!], {
    cwd: clone.dir,
    env: { ...env, ...stageEnv(stage("deps")), TURBO_CACHE_DIR: path.join(root, ".turbo", "cache") },
    stdio: "inherit",
  });
  // api-deps: the deps stage's manifests, then api-deps' own RUN (npm ci --omit=dev …), from the npm cache.
  const deps = path.join(clone.tmp, "api-deps");
  for (const ins of stage("deps").body.filter((x) => x.op === "COPY")) {
    const parts = ins.args.split(/\s+/);
    const dest = parts.at(-1)!.replace(/^\.\/?/, "");
    for (const src of parts.slice(0, -1)) {
      const target = dest === "" ? path.join(deps, src) : path.join(deps, dest, path.basename(src));
      mkdirSync(path.dirname(target), { recursive: true });
      cpSync(path.join(clone.dir, src), target);
    }
  }
  for (const cmd of runArgs(stage("api-deps")))
    execFileSync("sh", ["-c", cmd], {
      cwd: deps,
      env: { ...env, npm_config_prefer_offline: "true" },
      stdio: "inherit",
    });
  images.api = path.join(clone.tmp, "image-api");
  images.web = path.join(clone.tmp, "image-web");
  assemble(stage("api"), { build: clone.dir, "api-deps": deps }, images.api);
  assemble(stage("web"), { build: clone.dir }, images.web);
  redis = await startRedis();
}, 900_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await redis?.stop();
  clone?.remove();
});

describe("the Dockerfile's images, assembled without Docker", () => {
  it("hold no symlink that leads outside the image, and the api image has no dev tooling", () => {
    expect(escapingLinks(images.api!)).toEqual([]);
    expect(escapingLinks(images.web!)).toEqual([]);
    const modules = readdirSync(path.join(images.api!, "node_modules"));
    for (const dev of ["next", "react", "vitest", "turbo", "@biomejs"]) expect(modules).not.toContain(dev);
  });

  it("api: CMD serves, /readyz is 200 on Redis, the HEALTHCHECK command exits 0", async () => {
    const port = await freePort();
    const out = start("api", stage("api"), {
      PORT: String(port),
      HOST: "127.0.0.1",
      REDIS_URL: redis.url,
      API_URLS: `http://127.0.0.1:${port}`,
    });
    await waitForPort(port, { timeoutMs: 30_000 }).catch((e: Error) => {
      throw new Error(`${e.message}\n${out()}`);
    });
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);
    expect(await healthcheck(stage("api"), port)).toBe(0);
  }, 60_000);

  it("web: the standalone server.js serves the dashboard and its assets, the HEALTHCHECK command exits 0", async () => {
    const port = await freePort();
    const out = start("web", stage("web"), {
      PORT: String(port),
      HOSTNAME: "127.0.0.1",
      API_URLS: "http://localhost:4001",
    });
    await waitForPort(port, { timeoutMs: 30_000 }).catch((e: Error) => {
      throw new Error(`${e.message}\n${out()}`);
    });
    const page = await fetch(`http://127.0.0.1:${port}/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toMatch(/Lockyard/);
    const asset = html.match(/\/_next\/static\/[^"']+\.(?:js|css)/)?.[0];
    expect(asset).toBeDefined();
    expect((await fetch(`http://127.0.0.1:${port}${asset}`)).status).toBe(200);
    expect(await healthcheck(stage("web"), port)).toBe(0);
  }, 60_000);
});
