interface AttemptOutcome {
  outcome: "pending" | "created" | "replayed" | "conflict" | "error";
  detail: string;
}

/** The race's result in one sentence: who created the order, or why no client could. */
export function orderSummary(attempts: readonly AttemptOutcome[]): string {
  const created = attempts.filter((a) => a.outcome === "created").length;
  if (created === 1) return "Exactly one client created the order.";
  if (created > 1) return `${created} clients created it: that would be a double order.`;
  const failed = attempts.filter((a) => a.outcome === "error");
  if (failed.length === attempts.length && failed.length > 0) {
    const reasons = [...new Set(failed.map((a) => a.detail))].join("; ");
    return `Every client failed, so nothing was created: ${reasons}`;
  }
  const note = failed.length > 0 ? ` ${failed.length} of ${attempts.length} clients failed.` : "";
  return `No client created it here (it already existed, or another client is creating it).${note}`;
}
