import type { ReadWriteVerdict as Verdict } from "@lockyard/api";
import { Badge } from "@lockyard/ui/badge";

const CHECKS = [
  ["readersOverlapped", "readers shared the lock"],
  ["writerExclusive", "the writer held it alone"],
  ["writerNotStarved", "the writer was not starved"],
] as const;

/** The verdict the API judged from the holds: each check passed or failed, with what the holds show. */
export function ReadWriteVerdict({ verdict }: { verdict: Verdict }) {
  return (
    <div data-testid="rw-verdict" data-ok={verdict.ok ? "true" : "false"}>
      <p className="summary">
        <Badge tone={verdict.ok ? "ok" : "bad"}>{verdict.ok ? "as expected" : "unexpected"}</Badge>{" "}
        {verdict.ok
          ? "Readers shared the lock, the writer held it alone and was not starved."
          : "The holds broke a read-write lock's promise."}
      </p>
      <ul className="rw-findings">
        {CHECKS.map(([key, name], i) => (
          <li key={key} data-testid="rw-check" data-check={key} data-pass={verdict[key] ? "true" : "false"}>
            <Badge tone={verdict[key] ? "ok" : "bad"}>{verdict[key] ? "pass" : "fail"}</Badge> {name}:{" "}
            <span className="muted">{verdict.findings[i]}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
