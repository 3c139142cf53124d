export type FieldReading<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * A number field's text read the way the browser validated it: `Number()` accepts "1e3" as 1000, where
 * `parseInt` would stop at the "e". An empty field (also what a type="number" input reports for text it
 * cannot parse) is an error to show, never a silent default.
 */
export function readWholeNumber(raw: string, min: number, max: number): FieldReading<number> {
  const range = `a whole number from ${min} to ${max}`;
  if (raw.trim() === "") return { ok: false, message: `Enter ${range}.` };
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) return { ok: false, message: `Enter ${range}.` };
  return { ok: true, value: n };
}
