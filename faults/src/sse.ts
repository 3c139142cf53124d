/**
 * Opens a subscription over plain HTTP (GET + SSE) and returns what its first meaningful event says:
 * the HTTP-like status of a `serialized-error`, or 200 when data starts streaming.
 */
export async function firstSseStatus(
  url: string,
  timeoutMs = 3_000,
): Promise<{ status: number; code?: string }> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), timeoutMs);
  try {
    const res = await fetch(url, { signal: ctl.signal });
    if (!res.headers.get("content-type")?.startsWith("text/event-stream")) {
      const body = (await res.json().catch(() => ({}))) as { error?: { data?: { code?: string } } };
      return { status: res.status, code: body.error?.data?.code };
    }
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { status: 200 };
      buf += dec.decode(value, { stream: true });
      for (let i = buf.indexOf("\n\n"); i >= 0; i = buf.indexOf("\n\n")) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event === "serialized-error") {
          const e = JSON.parse(data ?? "{}") as { data?: { httpStatus?: number; code?: string } };
          return { status: e.data?.httpStatus ?? 500, code: e.data?.code };
        }
        if (event === undefined && data !== undefined) return { status: 200 };
      }
    }
  } finally {
    clearTimeout(timer);
    ctl.abort();
  }
}

/** Collects a subscription's data events until `stop` says so, an error event, or the timeout. */
export async function sseUntil(
  url: string,
  stop: (data: Record<string, unknown>) => boolean,
  timeoutMs = 20_000,
): Promise<{ events: Record<string, unknown>[]; error?: { code?: string } }> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), timeoutMs);
  const events: Record<string, unknown>[] = [];
  try {
    const res = await fetch(url, { signal: ctl.signal });
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { events };
      buf += dec.decode(value, { stream: true });
      for (let i = buf.indexOf("\n\n"); i >= 0; i = buf.indexOf("\n\n")) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event === "serialized-error") {
          return { events, error: (JSON.parse(data ?? "{}") as { data?: { code?: string } }).data ?? {} };
        }
        if (event === undefined && data !== undefined) {
          const d = JSON.parse(data) as Record<string, unknown>;
          events.push(d);
          if (stop(d)) return { events };
        }
      }
    }
  } catch (err) {
    if (ctl.signal.aborted) return { events, error: { code: "TIMEOUT" } };
    throw err;
  } finally {
    clearTimeout(timer);
    ctl.abort();
  }
}
