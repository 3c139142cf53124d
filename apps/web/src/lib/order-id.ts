import type { FieldReading } from "./whole-number";

/** The API's own rule for an order id (apps/api schemas): letters, digits, "_" and "-". */
export const ORDER_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const ORDER_ID_MAX_LENGTH = 64;

export function readOrderId(raw: string): FieldReading<string> {
  const id = raw.trim();
  if (id === "") return { ok: false, message: "Enter an order id." };
  if (!ORDER_ID_PATTERN.test(id))
    return {
      ok: false,
      message: `Use up to ${ORDER_ID_MAX_LENGTH} letters, digits, "_" or "-" (no spaces).`,
    };
  return { ok: true, value: id };
}
