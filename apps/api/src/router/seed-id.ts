import { idInput } from "../schemas.js";

/** The seed's ids are C# `long`s. */
export const MAX_SEED_ID = 9_223_372_036_854_775_807n;
/** Digits, negative or not: the seed's `long` binding would read these as a number, so they must be one. */
const NUMBER_LIKE = /^-?[0-9]+$/;
const CANONICAL = /^[1-9][0-9]*$/;
const ALLOWED = `a whole number from 1 to ${MAX_SEED_ID} in plain digits (no sign, no leading zeros), or a name of letters, digits, _ and - that is not all digits`;

/**
 * An id on the REST face. The dashboard's non-numeric names ("demo-1") stay allowed, but an id in digits is
 * the seed's `long`: "0", "-5" and "00100001" were their own keys, so `orderId <= 0` went through and
 * "00100001" slipped past the double-submit guard of order 100001.
 */
export const seedIdInput = idInput.superRefine((value, ctx) => {
  if (typeof value !== "string" || !NUMBER_LIKE.test(value)) return;
  if (CANONICAL.test(value) && BigInt(value) <= MAX_SEED_ID) return;
  ctx.addIssue({
    code: "custom",
    input: value,
    message: `expected ${ALLOWED}; got ${JSON.stringify(value)}`,
  });
});

/** As schemas.ts's `id`: 1001 and "1001" name the same key. */
export const seedId = seedIdInput.transform(String);
