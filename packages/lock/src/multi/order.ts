import { InvalidOptionError } from "../errors.js";
import { assertResource } from "../resource.js";

/** Most resources one multi-resource acquire takes: each is a round trip (or more) on the way in. */
export const MAX_RESOURCES = 64;

/**
 * The order every process takes a set of locks in: distinct names, sorted by UTF-16 code units. Two
 * callers that want overlapping sets then always meet on the lowest name they share first, so neither can
 * hold one lock the other waits for while waiting for one the other holds: no deadlock, on one Redis or
 * across Cluster slots alike.
 */
export function lockOrder(resources: unknown): string[] {
  if (!Array.isArray(resources) || resources.length === 0 || resources.length > MAX_RESOURCES) {
    throw new InvalidOptionError("resources", resources, `an array of 1-${MAX_RESOURCES} resource names`);
  }
  for (const r of resources) assertResource(r);
  return [...new Set(resources as string[])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
