// A TCP proxy in front of Redis (or PostgreSQL: it only carries bytes) that can lose replies, for the lock's
// and the API's tests: while `holdReplies` is on, commands still reach the server (and run) but their answers
// are dropped; `cut()` then closes every connection. That is the one failure a client cannot tell apart from
// "not done": the write happened, its reply never came. `dropRequests` loses the other way: nothing sent from
// then on reaches the server. Types: reply-cutter.d.mts.
import net from "node:net";

/** @param {string} targetUrl */
export async function startReplyCutter(targetUrl) {
  const target = new URL(targetUrl);
  /** @type {Set<{ client: net.Socket; upstream: net.Socket }>} */
  const pairs = new Set();
  let holding = false;
  let dropping = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    const pair = { client, upstream };
    pairs.add(pair);
    client.on("data", (d) => {
      if (!dropping) upstream.write(d);
    });
    upstream.on("data", (d) => {
      if (!holding) client.write(d);
    });
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const { port } = /** @type {net.AddressInfo} */ (server.address());
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    holdReplies() {
      holding = true;
    },
    dropRequests() {
      dropping = true;
    },
    cut() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      pairs.clear();
      holding = false;
      dropping = false;
    },
    close: () =>
      new Promise((resolve) => {
        for (const { client, upstream } of pairs) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => resolve(undefined));
      }),
  };
}
