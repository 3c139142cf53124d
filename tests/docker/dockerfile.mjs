// A small Dockerfile reader shared by lint.mjs and images.test.ts: instructions with continuation lines
// joined and comments dropped, grouped into stages.

/** [{ op, args, line }] */
export function instructions(text) {
  const out = [];
  let buf = "";
  let start = 0;
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (!buf && (line === "" || line.startsWith("#"))) continue;
    if (!buf) start = i + 1;
    if (line.endsWith("\\")) {
      buf += `${line.slice(0, -1)} `;
      continue;
    }
    buf += line;
    const [op, ...rest] = buf.split(/\s+/);
    out.push({ op: op.toUpperCase(), args: rest.join(" "), line: start });
    buf = "";
  }
  return out;
}

/** { args: { NAME: default }, stages: [{ image, name, body: [instruction] }] } */
export function parseDockerfile(text) {
  const all = instructions(text);
  const args = {};
  const stages = [];
  for (const ins of all) {
    if (ins.op === "FROM") {
      const m = ins.args.match(/^(\S+)(?:\s+AS\s+(\S+))?$/i);
      stages.push({ image: m?.[1] ?? "", name: m?.[2] ?? "", body: [] });
    } else if (stages.length === 0 && ins.op === "ARG") {
      const [k, v] = ins.args.split("=").map((s) => s.trim());
      args[k] = v;
    } else stages.at(-1)?.body.push(ins);
  }
  return { all, args, stages };
}

/** ENV k=v pairs of a stage, in order (values without spaces or quotes, as this repo writes them). */
export function stageEnv(stage) {
  return Object.fromEntries(
    stage.body
      .filter((x) => x.op === "ENV")
      .flatMap((x) => x.args.split(/\s+/).map((kv) => kv.split("=")))
      .filter(([k, v]) => k && v !== undefined),
  );
}
