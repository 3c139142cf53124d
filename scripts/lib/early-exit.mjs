// A service that dies while `npm start` waits for its port would otherwise cost the whole port timeout, or,
// when another process holds that port, go unnoticed under "Lockyard is up".

/** Resolves with the first of these run() children to end (its output read to the end). */
export function firstExit(children) {
  return new Promise((resolve) => {
    for (const child of children)
      child.once("close", (code, signal) =>
        resolve({ name: child.name, code, signal, lines: child.lastLines }),
      );
  });
}

/** What `node --watch` prints when its program ends with an error; it then waits for an edit, not exiting. */
const WATCH_FAILED = /^Failed running '/;

/**
 * Resolves with the first of these run() children whose program failed under `node --watch`: the watcher
 * itself keeps running, so firstExit() alone would leave `npm run dev` waiting out the port timeout.
 */
export function firstWatchFailure(children) {
  return new Promise((resolve) => {
    for (const child of children)
      child.on("line", (line) => {
        if (WATCH_FAILED.test(line))
          resolve({ name: child.name, code: null, signal: null, watching: true, lines: child.lastLines });
      });
  });
}

/** A paragraph saying which service ended, how, and the last lines it wrote. */
export function describeExit({ name, code, signal, watching = false, lines }, when) {
  const how = watching
    ? "failed (node --watch waits for an edit to run it again)"
    : signal
      ? `was killed by ${signal}`
      : `exited with code ${code}`;
  const tail = lines.length
    ? `; its last lines:\n${lines.map((l) => `    ${l}`).join("\n")}`
    : " without output";
  return `${name} ${how}${when ? ` ${when}` : ""}${tail}`;
}
