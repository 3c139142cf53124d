import net from "node:net";

/**
 * A TCP proxy in front of Redis that can lose replies (copied from apps/api/test/reply-cutter.ts): while
 * `holdReplies` is on, commands still reach Redis (and run) but their answers are dropped; `cut()` then
 * closes every connection. That is the one failure a client cannot tell apart from "not done": the write
 * happened, its reply never came.
 */
export async function startReplyCutter(targetUrl: string) {
  const target = new URL(targetUrl);
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  let holding = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    const pair = { client, upstream };
    pairs.add(pair);
    client.on("data", (d) => upstream.write(d));
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
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    holdReplies() {
      holding = true;
    },
    /** Closes every proxied connection and lets replies through again; clients reconnect through it. */
    cut() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      pairs.clear();
      holding = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const { client, upstream } of pairs) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
