// The lock library's types the API uses, in one place.
export type { LockEvent, LockHandle, LockInfo, Locks } from "@lockyard/lock";
