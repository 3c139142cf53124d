import type { ScenarioResult } from "../scenarios/types.js";
import { cell, targetLine, verdict } from "./format.js";
import type { BenchReport } from "./report.js";

const escapeCell = (s: string) => s.replaceAll("|", "\\|");

export function scenarioTable(s: ScenarioResult): string {
  if (s.pending) return `**Pending:** ${s.pending}\n`;
  const hasProfile = s.rows.some((r) => r.profile);
  const headers = [
    s.rowHeader ?? "library",
    ...(hasProfile ? ["settings"] : []),
    ...s.columns.map((c) => c.header),
    "target",
  ];
  const align = ["---", ...(hasProfile ? ["---"] : []), ...s.columns.map(() => "---:"), "---"];
  const lines = [`| ${headers.join(" | ")} |`, `| ${align.join(" | ")} |`];
  for (const r of s.rows) {
    const targets =
      r.targets?.map((t) => targetLine(t).replace(/ (PASS|MISS)$/, " **$1**")).join("<br>") ?? "–";
    const cells = [
      `**${escapeCell(r.label)}**`,
      ...(hasProfile ? [escapeCell(r.profile ?? "")] : []),
      ...s.columns.map((c) => cell(r.values[c.key], c.digits)),
      targets,
    ];
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return `${lines.join("\n")}\n`;
}

export function summaryTable(report: BenchReport): string {
  const lines = ["| scenario | target | measured (median) | verdict |", "| --- | --- | ---: | --- |"];
  for (const s of report.scenarios) {
    if (s.pending) {
      lines.push(`| ${s.id} | ${s.title} | – | pending |`);
      continue;
    }
    for (const r of s.rows) {
      for (const t of r.targets ?? []) {
        const line = targetLine(t);
        const measured = line.slice(t.text.length + 2, line.length - 5);
        lines.push(
          `| ${s.id}${r.profile && r.profile !== "recommended" ? " (seed settings)" : ""} | ${t.text} | ${measured} | **${verdict(t)}** |`,
        );
      }
    }
  }
  return `${lines.join("\n")}\n`;
}

const HOW_MEASURED = `## How measured

- One \`npm run bench\` starts its own \`redis-server\` (${"`scripts/lib/redis.mjs`"}, no persistence) and runs every library against it in the same process, one after another, with FLUSHALL between runs and a warm-up before each timed run. Each library gets its own ioredis 6 connection(s); the work's GET/SET in (c) and the bench's own INFO/FLUSHALL use separate connections.
- Every figure is the median of the rounds, with min–max in brackets. The rounds are interleaved (round 1 of every library, then round 2, …, starting with a different library each round), and ratios are computed per round and then their median is taken, because this 2-core machine is shared and noisy.
- **Lock calls** are round-trips: every command a library's connections write, counted on the client by wrapping ioredis \`sendCommand\` (the library's own subscriber connection included; connection handshakes such as HELLO/CLIENT/INFO left out). Redis 7's \`INFO commandstats\` also counts each command a Lua script runs, so its delta (shown as *Redis cmds incl. in scripts*, minus the work's GET/SET) is larger; the bench checks that commandstats' EVAL+EVALSHA delta equals the EVAL+EVALSHA the libraries sent.
- **Lockyard on PostgreSQL (lock table)** is the same library on a different store: \`createPgLocks\` on a PostgreSQL the bench starts itself (\`scripts/lib/postgres.mjs\`: initdb into a temp dir, loopback, fsync off) or on \`DATABASE_URL\`, in a table of its own emptied before each run. Its row counts *SQL statements* (every query its pool's connections send, LISTEN included; one round-trip each) instead of Redis calls, and the Redis CPU/calls columns do not apply to it; the work's GET/SET in (c) still go to Redis. It is never a peer in a target. Without PostgreSQL the bench leaves these rows out.
- (a) latency is one acquire plus one release, measured with \`performance.now()\`. (b) CPU is \`process.cpuUsage()\` of the bench process during the run. (c) A timeout is a task whose library gave up waiting; *overlapping holds* checks mutual exclusion from each hold's start/end. (d) heap is \`heapUsed\` after two \`global.gc()\` calls (node --expose-gc) before and after taking the locks. (e) autocannon runs inside the bench process; the two API instances and Redis share the same two cores.
- (f) spreads (c)'s tasks evenly over P = 2, 4 and 8 processes started with \`child_process.fork\`. Each process has its own connections, as in (c): the library's (plus its own subscriber where it has one) and one for the work's GET/SET. Each warms up on a key of its own, then reports ready; when all are ready the parent sets the stock and tells them all to go (the start barrier). *Wall* is timed by the parent on its own clock, from "go" to the last process's "done"; *finish spread* is the last "done" minus the first, as % of that wall. *Lock calls* are counted inside each process exactly as in (c) and sent back over IPC; the parent checks their EVAL+EVALSHA against commandstats. *Wait* is each task's acquire call to its lock, pooled over the processes. *Oversold* is units sold beyond what left the stock (the final stock must equal the start minus the sales, never below 0). The floor is the same tasks behind the in-process FIFO in one forked process, timed the same way, and *× floor* is a ratio within each round. Peers run on the bench's redis-server; Lockyard also runs each P on a 3-master Cluster (\`scripts/lib/cluster.mjs\`, as (h)), its lock and the work through ioredis \`Cluster\` clients: the *Cluster* columns. \`--quick\` runs 48 tasks from stock 24, one round.
- (i) 200 tasks (50 with \`--quick\`), all started at once, each take one permit of a 4-permit semaphore on one key and, holding it, INCR a Redis counter, sleep 2 ms and DECR it on the work connection, then release. The INCR's answer is the number of holders at that moment as Redis counts them (the DECR is answered before the release is sent), so *most holders at once* above 4 is a broken semaphore, in one process or several. *Lock calls* and *Redis cmds* are counted as in (c), the INCR/DECR left out; *mean holders* is the sum of the holds' durations ÷ the wall. The floor is the same tasks behind an in-process FIFO counting semaphore. Recommended settings wait up to 30 s, the seed's 5 s. The P2 rows split the tasks evenly over 2 forked processes started by a barrier and timed by the parent, as in (f), their commands counted in each process.
- (j) is (f) over a network: every connection of every process, the work's included, goes through \`scripts/lib/delay-proxy.mjs\` (run inside the bench process), which delays each chunk by 1 ms each way, in order: a round trip of about 2 ms (this kernel has no netem). Lockyard runs as it ships and as *handoffs confirmed* (\`localHandoff: "confirmed"\`, \`handoffAdoption: "attempt"\`: a local waiter starts on Redis's answer, a waiter handed the lock by another process adopts it with an attempt), at P = 1, 2 and 4; the peers at P = 2 and 4; the floor is the in-process FIFO through the same proxy. *handoffs confirmed ÷ Lockyard* is that row's wall over Lockyard's, per round. No targets: it shows what the round trips saved on loopback are worth where they cost something.
`;

export function markdown(report: BenchReport): string {
  const out: string[] = [
    "# Lockyard benchmark: latest run",
    "",
    `${report.generatedAt} · Node ${report.machine.node} · Redis ${report.machine.redis} · ${report.machine.cpus}× ${report.machine.cpuModel} · ${report.throughputRounds} rounds of (a), (b), (e) and ${report.rounds} of (c), (d), (f), (i) · ${report.durationSeconds.toFixed(0)} s`,
    "",
    ...(report.merged ?? []).flatMap((m) => [
      `Scenario(s) ${m.scenarios.join(", ")} re-run alone on ${m.at} (\`npm run bench -- --only ${m.scenarios.join(",")} --merge\`), Node ${m.machine.node}, Redis ${m.machine.redis}.`,
      "",
    ]),
    "## Targets",
    "",
    summaryTable(report),
  ];
  for (const s of report.scenarios) {
    out.push(`## ${s.title}`, "", scenarioTable(s));
    for (const n of s.notes) out.push(`- ${n}`);
    if (s.notes.length) out.push("");
  }
  out.push(HOW_MEASURED, "## Settings", "");
  for (const s of report.scenarios) {
    const entries = Object.entries(s.settings);
    if (entries.length === 0) continue;
    out.push(`**${s.title}**`, "");
    for (const [id, text] of entries) out.push(`- \`${id}\`: ${text}`);
    out.push("");
  }
  return out.join("\n");
}
