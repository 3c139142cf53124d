"use client";

import { useEffect, useEffectEvent, useMemo, useRef, useState } from "react";

export interface RowState<T> {
  item: T;
  phase: "new" | "steady" | "gone";
}

const NEW_MS = 1200;
const GONE_MS = 1200;

/**
 * Keeps rows that just left on screen a moment longer (phase "gone") and marks rows that just
 * arrived (phase "new"), so appearances and disappearances are visible rather than instant.
 */
export function useRowLifecycle<T>(items: readonly T[], keyOf: (item: T) => string): RowState<T>[] {
  const seen = useRef(new Map<string, { item: T; firstSeen: number; goneAt: number | null }>());
  const [tick, setTick] = useState(0);
  const keyOfLatest = useEffectEvent(keyOf);

  useEffect(() => {
    const now = performance.now();
    const present = new Set<string>();
    for (const item of items) {
      const key = keyOfLatest(item);
      present.add(key);
      const prev = seen.current.get(key);
      seen.current.set(key, {
        item,
        firstSeen: prev && prev.goneAt === null ? prev.firstSeen : now,
        goneAt: null,
      });
    }
    for (const [key, entry] of seen.current) {
      if (!present.has(key) && entry.goneAt === null) entry.goneAt = now;
    }
    setTick((t) => t + 1);
  }, [items]);

  // Re-render when a highlight ends or a departed row should be dropped.
  useEffect(() => {
    void tick;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [key, e] of seen.current) {
      if (e.goneAt !== null) {
        const until = e.goneAt + GONE_MS;
        if (until <= now) seen.current.delete(key);
        else next = Math.min(next, until);
      } else if (e.firstSeen + NEW_MS > now) next = Math.min(next, e.firstSeen + NEW_MS);
    }
    if (next === Number.POSITIVE_INFINITY) return;
    const t = setTimeout(() => setTick((x) => x + 1), Math.max(16, next - now));
    return () => clearTimeout(t);
  }, [tick]);

  // The same array until something changes, so sorting and paging downstream are memoized.
  return useMemo(() => {
    void tick;
    const now = performance.now();
    const rows: RowState<T>[] = [];
    for (const e of seen.current.values()) {
      if (e.goneAt !== null && e.goneAt + GONE_MS <= now) continue;
      rows.push({
        item: e.item,
        phase: e.goneAt !== null ? "gone" : e.firstSeen + NEW_MS > now ? "new" : "steady",
      });
    }
    return rows;
  }, [tick]);
}
