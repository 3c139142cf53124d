// A TCP proxy in front of Redis that delays every chunk by `delayMs` in each direction, keeping order: a network
// with a round trip of about 2 × delayMs on one machine (this kernel has no netem). Bench (j) runs (f) through it
// (bench/src/scenarios/cross-process-net.ts); by hand:
//   node scripts/lib/delay-proxy.mjs 6400 redis://127.0.0.1:6379 1   → redis://127.0.0.1:6400, RTT ≈ 2 ms
import net from "node:net";

/**
 * @param {number} port where to listen
 * @param {string} targetUrl the Redis to forward to
 * @param {number} delayMs added to each direction
 */
export function startDelayProxy(port, targetUrl, delayMs) {
  const target = new URL(targetUrl);
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    forward(client, upstream, delayMs);
    forward(upstream, client, delayMs);
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

/** Writes what `from` sends to `to` delayMs after it arrived, in arrival order. */
function forward(from, to, delayMs) {
  let previous = Promise.resolve();
  from.on("data", (chunk) => {
    const due = performance.now() + delayMs;
    previous = previous
      .then(() => new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now()))))
      .then(() => to.write(chunk));
  });
  from.on("close", () => to.destroy());
  from.on("error", () => to.destroy());
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [port, targetUrl, delayMs] = process.argv.slice(2);
  await startDelayProxy(Number(port), targetUrl ?? "redis://127.0.0.1:6379", Number(delayMs ?? 1));
  console.log(`delay proxy on redis://127.0.0.1:${port}, +${delayMs ?? 1} ms each way`);
}
