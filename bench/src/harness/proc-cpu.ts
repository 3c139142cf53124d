import { readFileSync } from "node:fs";

// USER_HZ is 100 on every Linux Node supports; /proc/<pid>/stat counts in those ticks.
const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a child process has used so far, from /proc; NaN where there is no /proc. */
export function processCpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces; the fields after its closing parenthesis are fixed.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}
