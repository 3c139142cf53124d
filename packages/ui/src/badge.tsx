import type { ReactNode } from "react";

export type Tone = "ok" | "warn" | "bad" | "info" | "neutral";

export interface BadgeProps {
  tone?: Tone;
  children: ReactNode;
  title?: string;
  testId?: string;
}

export function Badge({ tone = "neutral", children, title, testId }: BadgeProps) {
  return (
    <span className={`ly-badge ly-tone-${tone}`} title={title} data-testid={testId}>
      {children}
    </span>
  );
}
