// Deprecated (issue 16): import the library's types from "@lockyard/lock" directly. The last importers,
// locks/views.ts and locks/snapshot.ts, move when their owners next touch them; then this file goes.
export type { LockEvent, LockHandle, LockInfo, Locks } from "@lockyard/lock";
