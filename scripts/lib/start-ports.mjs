// WEB_PORT and API_PORTS, refused up front when two services would want one port: the second one to start
// would die on EADDRINUSE after the whole build.

function list(name, raw) {
  const parts = raw.split(",").map((p) => p.trim());
  if (parts.some((p) => !/^\d{1,5}$/.test(p) || Number(p) < 1 || Number(p) > 65_535))
    throw new Error(`${name}=${raw} is not a list of ports (1-65535, comma-separated).`);
  return parts.map(Number);
}

/**
 * The ports `npm start` runs on, from WEB_PORT (one port, default 3000) and API_PORTS (one per API instance,
 * default 4001,4002). Throws an Error saying what to change.
 */
export function startPorts(env) {
  const apiPorts = env.API_PORTS ? list("API_PORTS", env.API_PORTS) : [4001, 4002];
  const web = env.WEB_PORT ? list("WEB_PORT", env.WEB_PORT) : [3000];
  if (web.length !== 1)
    throw new Error(
      `WEB_PORT=${env.WEB_PORT}: the dashboard runs on one port; set WEB_PORT to a single port.`,
    );
  const dup = apiPorts.find((p, i) => apiPorts.indexOf(p) !== i);
  if (dup !== undefined)
    throw new Error(
      `API_PORTS=${env.API_PORTS} lists port ${dup} twice: each API instance needs its own port.`,
    );
  if (apiPorts.includes(web[0]))
    throw new Error(
      `WEB_PORT=${web[0]} is also in API_PORTS=${apiPorts.join(",")}: give the dashboard a port of its own.`,
    );
  return { apiPorts, webPort: web[0] };
}
