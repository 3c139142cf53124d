import type { IncomingMessage } from "node:http";

const LOOPBACK = ["localhost", "127.0.0.1", "[::1]"];
/** A host name or bracketed IPv6 address, optionally with a port: nothing else is a valid Host. */
const HOST_SHAPE = /^(?:[a-z0-9](?:[a-z0-9.-]{0,252})|\[[0-9a-f:.]{2,45}\])(?::\d{1,5})?$/i;

export interface HostPolicy {
  /** The port this instance listens on (known after listen). */
  port: () => number;
  /** `ALLOWED_HOSTS`: `name` (any port) or `name:port`. */
  allowed: readonly string[];
  /** Hosts of API_URLS (`name:port`): the burst calls every instance by these. */
  apiUrls: readonly string[];
}

export type HostVerdict = { ok: true } | { ok: false; status: 400 | 421; message: string };

/**
 * DNS rebinding defence: a page on evil.example that re-points its name at 127.0.0.1 sends
 * `Host: evil.example`. Only loopback names on this port, the hosts of API_URLS and ALLOWED_HOSTS are
 * served; other names get 421 Misdirected Request, malformed values 400.
 */
export function checkHost(req: IncomingMessage, policy: HostPolicy): HostVerdict {
  const raw = req.headers.host;
  if (raw === undefined || !HOST_SHAPE.test(raw)) {
    return { ok: false, status: 400, message: "malformed Host header" };
  }
  const host = raw.toLowerCase();
  const port = policy.port();
  const exact = new Set<string>();
  for (const name of LOOPBACK) {
    exact.add(`${name}:${port}`);
    if (port === 80) exact.add(name);
  }
  for (const url of policy.apiUrls) exact.add(new URL(url).host.toLowerCase());
  for (const h of policy.allowed) exact.add(h);
  const name = host.replace(/:\d+$/, "");
  if (exact.has(host) || policy.allowed.includes(name)) return { ok: true };
  return {
    ok: false,
    status: 421,
    message: `host ${raw} is not served here (allowed: loopback on port ${port}, API_URLS hosts, ALLOWED_HOSTS)`,
  };
}
