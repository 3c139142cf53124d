/**
 * A `locks.watch` subscriber over plain SSE (what a dashboard's EventSource does), counting the bytes it
 * receives and tracking which lock keys it currently sees. It understands both wire formats: the seed's full
 * snapshots `{ at, instanceId, locks }` and the event stream `{ kind: "snapshot" | "delta" | "heartbeat" }`.
 */

interface LockLike {
  store?: string;
  key: string;
}

type Message =
  | { kind: "snapshot"; locks: LockLike[] }
  | { kind: "delta"; added: LockLike[]; changed: LockLike[]; removed: string[] }
  | { kind: "heartbeat" }
  | { kind?: undefined; locks: LockLike[] };

export interface LockStream {
  /** Keys this subscriber currently sees. */
  readonly keys: ReadonlySet<string>;
  /** Body bytes received so far (SSE text, keep-alive pings included). */
  readonly bytes: number;
  readonly messages: number;
  /** Resolves with the first lock list (snapshot); rejects when the stream fails first. */
  readonly ready: Promise<void>;
  close(): void;
}

export type KeysListener = (added: readonly string[], removed: readonly string[], now: number) => void;

export function openLockStream(baseUrl: string, onKeys: KeysListener, input: object = {}): LockStream {
  const abort = new AbortController();
  const keys = new Set<string>();
  let bytes = 0;
  let messages = 0;
  let markReady!: () => void;
  let fail!: (err: unknown) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    fail = reject;
  });
  ready.catch(() => {});

  const replace = (locks: LockLike[], now: number) => {
    const next = new Set(locks.map((l) => l.key));
    const added = [...next].filter((k) => !keys.has(k));
    const removed = [...keys].filter((k) => !next.has(k));
    keys.clear();
    for (const k of next) keys.add(k);
    if (added.length || removed.length) onKeys(added, removed, now);
    markReady();
  };

  const handle = (data: string) => {
    const now = performance.now();
    const msg = JSON.parse(data) as Message;
    messages++;
    if (msg.kind === "heartbeat") return;
    if (msg.kind === "delta") {
      // Removed first, then added: a key re-sent in `added` after a removal in the same delta stays.
      const removed = msg.removed.filter((k) => keys.delete(k));
      const added = msg.added.map((l) => l.key).filter((k) => !keys.has(k));
      for (const k of added) keys.add(k);
      if (added.length || removed.length) onKeys(added, removed, now);
      return;
    }
    replace(msg.locks, now);
  };

  const url = `${baseUrl}/trpc/locks.watch?input=${encodeURIComponent(JSON.stringify(input))}`;
  void (async () => {
    const res = await fetch(url, { signal: abort.signal, headers: { accept: "text/event-stream" } });
    if (!res.ok || !res.body) throw new Error(`locks.watch answered ${res.status}`);
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      buf += decoder.decode(chunk, { stream: true });
      let end = buf.indexOf("\n\n");
      while (end >= 0) {
        const event = buf.slice(0, end);
        buf = buf.slice(end + 2);
        let type = "message";
        const data: string[] = [];
        for (const line of event.split("\n")) {
          if (line.startsWith("event:")) type = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(line[5] === " " ? 6 : 5));
        }
        if (type === "message" && data.length > 0) handle(data.join("\n"));
        end = buf.indexOf("\n\n");
      }
    }
  })().catch((err: unknown) => {
    if (!abort.signal.aborted) fail(err);
  });

  return {
    keys,
    get bytes() {
      return bytes;
    },
    get messages() {
      return messages;
    },
    ready,
    close: () => abort.abort(),
  };
}
