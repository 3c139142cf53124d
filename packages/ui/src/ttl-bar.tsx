"use client";

import { useEffect, useRef } from "react";
import { prefersReducedMotion, subscribeTicker } from "./ttl-ticker.js";

export interface TtlBarProps {
  /** Remaining time to live in the snapshot; -1 means no expiry, -2 means the key is gone. */
  pttlMs: number;
  /** `performance.now()` when the snapshot arrived: the countdown runs from here, immune to clock skew. */
  receivedAt: number;
  /** The full lease, when known; otherwise the largest TTL seen so far is the scale. */
  leaseMs?: number;
  testId?: string;
}

const RENEW_SLACK_MS = 40;

/** Seconds, like every other duration on the dashboard: "4.2 s", "12 s". */
export function formatTtl(ms: number): string {
  if (ms >= 10_000) return `${Math.round(ms / 1000)} s`;
  return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
}

function levelOf(fraction: number): "high" | "mid" | "low" {
  return fraction < 0.2 ? "low" : fraction < 0.5 ? "mid" : "high";
}

/**
 * A countdown bar. The fill shrinks through a transform animation that runs on the compositor, restarted
 * only when a snapshot changes the prediction; a shared ticker updates the text. With reduced motion
 * the bar steps once a second instead. When a newer snapshot carries more time than the countdown
 * predicted, the lease was renewed: the bar jumps back and flashes.
 */
export function TtlBar({ pttlMs, receivedAt, leaseMs, testId }: TtlBarProps) {
  const rootRef = useRef<HTMLDivElement>(null);
  const fillRef = useRef<HTMLDivElement>(null);
  const textRef = useRef<HTMLSpanElement>(null);
  const scaleRef = useRef(Math.max(leaseMs ?? 0, pttlMs, 1));
  const lastRef = useRef<{ pttlMs: number; receivedAt: number } | null>(null);
  const renewalsRef = useRef(0);

  useEffect(() => {
    const root = rootRef.current;
    const fill = fillRef.current;
    const text = textRef.current;
    if (!root || !fill || !text) return;
    const prev = lastRef.current;
    lastRef.current = { pttlMs, receivedAt };
    scaleRef.current = Math.max(scaleRef.current, leaseMs ?? 0, pttlMs);
    const scale = scaleRef.current;

    if (prev && pttlMs >= 0 && prev.pttlMs >= 0) {
      const predicted = prev.pttlMs - (receivedAt - prev.receivedAt);
      if (pttlMs > predicted + RENEW_SLACK_MS) {
        renewalsRef.current += 1;
        root.dataset.renewals = String(renewalsRef.current);
        // Alternating between two identical keyframes restarts the flash without a forced reflow.
        root.dataset.flash = renewalsRef.current % 2 === 0 ? "a" : "b";
      }
    }

    let animation: Animation | null = null;
    let shownText = "";
    let shownLevel = "";
    const remainingAt = (now: number) => Math.max(0, pttlMs - (now - receivedAt));
    const draw = (now: number, reduced: boolean) => {
      if (pttlMs < 0) return;
      const remaining = remainingAt(now);
      const fraction = Math.min(1, remaining / scale);
      // The DOM is written only when the shown text changes: once a second above 10 s.
      const t = formatTtl(remaining);
      if (t !== shownText) {
        text.textContent = shownText = t;
        root.dataset.remainingMs = String(Math.round(remaining));
      }
      const level = levelOf(fraction);
      if (level !== shownLevel) root.dataset.level = shownLevel = level;
      if (reduced) {
        animation?.cancel();
        animation = null;
        fill.style.transform = `scaleX(${fraction.toFixed(3)})`;
      } else if (!animation && remaining > 0 && typeof fill.animate === "function") {
        fill.style.transform = "scaleX(0)";
        animation = fill.animate([{ transform: `scaleX(${fraction})` }, { transform: "scaleX(0)" }], {
          duration: remaining,
          easing: "linear",
          fill: "forwards",
        });
      } else if (!animation) {
        fill.style.transform = `scaleX(${fraction})`;
      }
    };

    if (pttlMs < 0) {
      fill.style.transform = "scaleX(1)";
      text.textContent = pttlMs === -1 ? "no expiry" : "gone";
      root.dataset.remainingMs = String(pttlMs);
      root.dataset.level = "high";
      return;
    }
    // Draw now, so the remaining time changes in the same commit as a detected renewal.
    draw(performance.now(), prefersReducedMotion());
    const unsubscribe = subscribeTicker({ tick: draw });
    return () => {
      unsubscribe();
      animation?.cancel();
    };
  }, [pttlMs, receivedAt, leaseMs]);

  return (
    <div className="ly-ttl" ref={rootRef} data-testid={testId} data-renewals="0">
      <div className="ly-ttl-track" aria-hidden="true">
        <div className="ly-ttl-fill" ref={fillRef} />
      </div>
      <span className="ly-ttl-text" ref={textRef}>
        {pttlMs < 0 ? "" : formatTtl(pttlMs)}
      </span>
    </div>
  );
}
