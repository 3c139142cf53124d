// What the API says when it cannot start: one line on stderr and exit 1. A stack trace would bury the reason,
// and `npm start` shows an instance's last lines when it dies.
import { type Env, env as readEnv } from "./env.js";

export function exitWith(message: string): never {
  console.error(`[lockyard api] ${message}`);
  process.exit(1);
}

/** The parsed environment, or the process ends naming each bad variable. */
export function envOrExit(): Env {
  try {
    return readEnv();
  } catch (err) {
    exitWith((err as Error).message);
  }
}

/** Why server.listen failed, and what to do about it. */
export function listenFailure(err: NodeJS.ErrnoException, host: string, port: number): string {
  const at = `${host}:${port}`;
  if (err.code === "EADDRINUSE")
    return `cannot listen on ${at}: port ${port} is already in use. Stop whatever listens there or set PORT to a free port.`;
  if (err.code === "EACCES")
    return `cannot listen on ${at}: permission denied. Use a port above 1023 or run with the needed privileges.`;
  if (err.code === "EADDRNOTAVAIL")
    return `cannot listen on ${at}: ${host} is not an address of this machine. Set HOST to one that is (127.0.0.1, 0.0.0.0).`;
  return `cannot listen on ${at}: ${err.message}`;
}
