"use client";

import { useEffect, useRef } from "react";

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
const FLASH_MS = 600;

function formatMs(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(0)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms)} ms`;
}

/**
 * A countdown bar animated every frame from one snapshot. When a newer snapshot carries more time
 * than the countdown predicted, the lease was renewed: the bar jumps back and flashes.
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
    const prev = lastRef.current;
    lastRef.current = { pttlMs, receivedAt };
    scaleRef.current = Math.max(scaleRef.current, leaseMs ?? 0, pttlMs);
    if (!root || !prev || pttlMs < 0 || prev.pttlMs < 0) return;
    const predicted = prev.pttlMs - (receivedAt - prev.receivedAt);
    if (pttlMs <= predicted + RENEW_SLACK_MS) return;
    renewalsRef.current += 1;
    root.dataset.renewals = String(renewalsRef.current);
    root.classList.remove("ly-ttl-renewed");
    // Reading layout restarts the CSS animation when renewals come in quick succession.
    void root.offsetWidth;
    root.classList.add("ly-ttl-renewed");
    const t = setTimeout(() => root.classList.remove("ly-ttl-renewed"), FLASH_MS);
    return () => clearTimeout(t);
  }, [pttlMs, receivedAt, leaseMs]);

  useEffect(() => {
    let frame = 0;
    const draw = () => {
      const root = rootRef.current;
      const fill = fillRef.current;
      const text = textRef.current;
      if (root && fill && text) {
        if (pttlMs < 0) {
          fill.style.width = "100%";
          text.textContent = pttlMs === -1 ? "no expiry" : "gone";
          root.dataset.remainingMs = String(pttlMs);
        } else {
          const remaining = Math.max(0, pttlMs - (performance.now() - receivedAt));
          const pct = Math.min(100, (remaining / scaleRef.current) * 100);
          fill.style.width = `${pct}%`;
          root.dataset.level = pct < 20 ? "low" : pct < 50 ? "mid" : "high";
          root.dataset.remainingMs = String(Math.round(remaining));
          text.textContent = formatMs(remaining);
        }
      }
      frame = requestAnimationFrame(draw);
    };
    // Draw once now, so the remaining time changes in the same commit as a detected renewal.
    draw();
    return () => cancelAnimationFrame(frame);
  }, [pttlMs, receivedAt]);

  return (
    <div className="ly-ttl" ref={rootRef} data-testid={testId} data-renewals="0">
      <div className="ly-ttl-track" aria-hidden="true">
        <div className="ly-ttl-fill" ref={fillRef} />
      </div>
      <span className="ly-ttl-text" ref={textRef}>
        {pttlMs < 0 ? "" : formatMs(pttlMs)}
      </span>
    </div>
  );
}
