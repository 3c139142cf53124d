import type { ReactNode } from "react";

export interface PanelProps {
  title: string;
  subtitle?: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
  testId?: string;
  id?: string;
  className?: string;
}

export function Panel({ title, subtitle, actions, children, testId, id, className }: PanelProps) {
  return (
    <section
      className={className ? `ly-panel ${className}` : "ly-panel"}
      data-testid={testId}
      id={id}
      aria-labelledby={id ? `${id}-title` : undefined}
    >
      <header className="ly-panel-head">
        <div>
          <h2 className="ly-panel-title" id={id ? `${id}-title` : undefined}>
            {title}
          </h2>
          {subtitle ? <p className="ly-panel-sub">{subtitle}</p> : null}
        </div>
        {actions ? <div className="ly-panel-actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}
