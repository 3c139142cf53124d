#!/usr/bin/env node
// Lint rule for the library's layering: src/core/ is the store-independent lock and talks to stores only
// through the LockBackend interface. It may not import a backend folder (redis/, redlock/, pg/) or a
// store client (ioredis, pg). Run by `npm run lint`; exits 1 and names every offending import.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../src");
const FORBIDDEN_DIRS = ["redis", "redlock", "pg"];
const FORBIDDEN_PACKAGES = ["ioredis", "pg"];

function* files(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (p.endsWith(".ts")) yield p;
  }
}

const problems = [];
for (const file of files(path.join(src, "core"))) {
  const text = readFileSync(file, "utf8");
  for (const m of text.matchAll(/\bfrom\s+["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
    const spec = m[1] ?? m[2];
    const rel = path.relative(src, file);
    if (FORBIDDEN_PACKAGES.includes(spec)) problems.push(`${rel}: imports the store client "${spec}"`);
    if (spec.startsWith(".")) {
      const target = path.relative(src, path.resolve(path.dirname(file), spec));
      const top = target.split(path.sep)[0];
      if (FORBIDDEN_DIRS.includes(top)) problems.push(`${rel}: imports "${spec}" from the ${top}/ backend`);
    }
  }
}
if (problems.length > 0) {
  console.error("core/ must talk to stores only through the LockBackend interface:");
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log("core/ boundary: ok (no backend or store-client imports)");
