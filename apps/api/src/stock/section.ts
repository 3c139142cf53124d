export type Outcome =
  | { ok: true; stock: number; token: number | null }
  | { ok: false; reason: "sold-out" | "stale-token"; stock: number | null };

/** A mode's outcome, and when its guarded section began (performance.now()): the reply's waitedMs ends there. */
export interface SectionResult {
  outcome: Outcome;
  enteredAt: number;
}

/** Runs a mode's guarded section (check → work → write) now, noting when it began. */
export async function runSection(section: () => Promise<Outcome>): Promise<SectionResult> {
  const enteredAt = performance.now();
  return { outcome: await section(), enteredAt };
}
