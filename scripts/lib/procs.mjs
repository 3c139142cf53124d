import { spawn } from "node:child_process";

const children = new Set();

/** How many of a child's last output lines it keeps, to say why it died (early-exit.mjs). */
const KEPT_LINES = 12;

/**
 * Spawns a long-running child whose output is prefixed with its name. The child carries `name` and
 * `lastLines` (its last lines of output, stdout and stderr together).
 */
export function run(name, cmd, args, { cwd, env, color = 36 } = {}) {
  const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  child.name = name;
  child.lastLines = [];
  const keep = (line) => {
    child.lastLines.push(line);
    if (child.lastLines.length > KEPT_LINES) child.lastLines.shift();
    child.emit("line", line);
  };
  const tag = `\x1b[${color}m[${name}]\x1b[0m `;
  const pipe = (stream, out) => {
    let rest = "";
    stream.on("data", (d) => {
      const lines = (rest + d.toString()).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        keep(line);
        out.write(`${tag}${line}\n`);
      }
    });
    stream.on("end", () => {
      if (rest === "") return;
      keep(rest);
      out.write(`${tag}${rest}\n`);
    });
  };
  pipe(child.stdout, process.stdout);
  pipe(child.stderr, process.stderr);
  child.on("exit", () => children.delete(child));
  return child;
}

/** Stops every child started with run(): SIGTERM, then SIGKILL after graceMs. */
export async function stopAll(graceMs = 5000) {
  const waiting = [...children].map(
    (c) =>
      new Promise((resolve) => {
        if (c.exitCode !== null || c.signalCode !== null) return resolve();
        c.once("exit", resolve);
        try {
          process.kill(c.pid, "SIGTERM");
        } catch {
          resolve();
        }
        setTimeout(() => {
          try {
            process.kill(c.pid, "SIGKILL");
          } catch {}
        }, graceMs).unref();
      }),
  );
  await Promise.all(waiting);
}

/** Runs a command to completion with inherited stdio; resolves with its exit code. */
export function exec(cmd, args, { cwd, env, capture = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: capture ? ["ignore", "pipe", "pipe"] : "inherit",
    });
    children.add(child);
    let output = "";
    if (capture) {
      child.stdout.on("data", (d) => {
        output += d.toString();
        process.stdout.write(d);
      });
      child.stderr.on("data", (d) => {
        output += d.toString();
        process.stderr.write(d);
      });
    }
    child.on("exit", (code, signal) => {
      children.delete(child);
      resolve({ code: code ?? (signal ? 1 : 0), output });
    });
  });
}
