import { Badge } from "@lockyard/ui/badge";
import type { LiveLock } from "./live-locks";

const KIND_TITLES: Record<LiveLock["kind"], string> = {
  mutex: "one owner at a time",
  semaphore: "up to N holders at once, one permit each",
  "read-write": "many readers or one writer",
};

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** What the kind's holders amount to, in words: "2 / 3 permits", "3 readers", "writer". */
function summary(item: LiveLock): string | null {
  if (item.permits) {
    const { used, total } = item.permits;
    return total === null ? plural(used, "permit", "permits") : `${used} / ${total} permits`;
  }
  if (item.readWrite) {
    // A writer holds it alone (its own re-entries as reader count in its hold).
    const { readers, writer } = item.readWrite;
    return writer !== null ? "writer" : plural(readers, "reader", "readers");
  }
  return null;
}

/** The lock's kind as a text badge, and for a semaphore or read-write lock who holds it and whether a writer waits. */
export function LockKind({ item }: { item: LiveLock }) {
  const text = summary(item);
  return (
    <span className="lock-kind" data-testid="lock-kind" data-kind={item.kind}>
      <Badge tone="neutral" title={KIND_TITLES[item.kind]}>
        {item.kind}
      </Badge>
      {text !== null ? (
        <span className="lock-kind-summary" data-testid="lock-kind-summary">
          {text}
        </span>
      ) : null}
      {item.readWrite?.writerWaiting ? (
        <Badge
          tone="warn"
          title="a writer waits: new readers are kept out until it has had its turn"
          testId="lock-writer-waiting"
        >
          writer waiting
        </Badge>
      ) : null}
    </span>
  );
}
