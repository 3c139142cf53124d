import { InvalidResourceError } from "./errors.js";

const RESOURCE = /^[A-Za-z0-9:_.-]{1,200}$/;

export function isValidResource(resource: unknown): resource is string {
  return typeof resource === "string" && RESOURCE.test(resource);
}

export function assertResource(resource: unknown): asserts resource is string {
  if (!isValidResource(resource)) throw new InvalidResourceError(resource);
}

/** `<prefix>{<resource>}`: the hash tag keeps every key of one lock in one Cluster slot. */
export const lockKey = (prefix: string, resource: string): string => `${prefix}{${resource}}`;
export const fenceKey = (resource: string): string => `fence:{${resource}}`;
export const releaseChannel = (resource: string): string => `lock-released:{${resource}}`;

/** The inverse of lockKey, or null when the key does not have the exact `<prefix>{<resource>}` shape. */
export function resourceOfKey(prefix: string, key: string): string | null {
  if (!key.startsWith(`${prefix}{`) || !key.endsWith("}")) return null;
  const r = key.slice(prefix.length + 1, -1);
  return isValidResource(r) ? r : null;
}
