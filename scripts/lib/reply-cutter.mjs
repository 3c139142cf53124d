// A TCP proxy in front of Redis (or PostgreSQL: it only carries bytes) that can lose replies, for the lock's
// and the API's tests: while `holdReplies` is on, commands still reach the server (and run) but their answers
// are dropped; `cut()` then closes every connection. That is the one failure a client cannot tell apart from
// "not done": the write happened, its reply never came. `dropRequests` loses the other way: nothing sent from
// then on reaches the server. `cutOnce` kills the one connection that sends a given statement, before or after
// the server got it. Types: reply-cutter.d.mts.
import net from "node:net";

/** @param {string} targetUrl */
export async function startReplyCutter(targetUrl) {
  const target = new URL(targetUrl);
  /** @type {Set<{ client: net.Socket; upstream: net.Socket }>} */
  const pairs = new Set();
  let holding = false;
  let dropping = false;
  /** @type {{ text: string; when: "before-server" | "after-server"; done: (cut: boolean) => void } | undefined} */
  let cutting;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    const pair = { client, upstream };
    pairs.add(pair);
    // This connection sent the statement `cutOnce` waits for, and the server got it: its answer is not passed on.
    let cutOnAnswer = false;
    client.on("data", (d) => {
      if (cutting && d.includes(cutting.text)) {
        const { when, done } = cutting;
        cutting = undefined;
        done(true);
        if (when === "before-server") return end();
        cutOnAnswer = true;
      }
      if (!dropping) upstream.write(d);
    });
    upstream.on("data", (d) => {
      if (cutOnAnswer) return end();
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
    cutOnce(text, when) {
      cutting?.done(false);
      return new Promise((resolve) => {
        cutting = { text, when, done: resolve };
      });
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
