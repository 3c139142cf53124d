"use client";

import { type Key, type ReactNode, type RefObject, useEffect, useRef, useState } from "react";

export interface Column<T> {
  key: string;
  header: ReactNode;
  render: (row: T) => ReactNode;
  className?: string;
  /** Offer this column as a sort key (the header becomes a button). */
  sortable?: boolean;
}

export interface SortState {
  key: string;
  dir: "asc" | "desc";
}

export interface TableProps<T> {
  columns: readonly Column<T>[];
  rows: readonly T[];
  rowKey: (row: T) => Key;
  rowClassName?: (row: T) => string | undefined;
  /** Extra attributes per row, e.g. `data-testid` or `data-*` hooks for tests. */
  rowAttrs?: (row: T) => Record<`data-${string}`, string | number | undefined>;
  empty: ReactNode;
  /** Names the table, and the scrolling region around it. */
  caption: string;
  testId?: string;
  sort?: SortState;
  onSort?: (key: string) => void;
}

/** True while the element's content is larger than its box, so it scrolls. Measured on resize only. */
function useOverflows(ref: RefObject<HTMLElement | null>): boolean {
  const [overflows, setOverflows] = useState(false);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    const measure = () =>
      setOverflows(el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1);
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    const inner = el.firstElementChild;
    if (inner) ro.observe(inner);
    return () => ro.disconnect();
  }, [ref]);
  return overflows;
}

/**
 * Scrolls sideways on narrow screens rather than squeezing the columns. The wrapper is named after the
 * table, and when it does scroll it takes keyboard focus, so arrow keys can scroll it.
 */
export function Table<T>({
  columns,
  rows,
  rowKey,
  rowClassName,
  rowAttrs,
  empty,
  caption,
  testId,
  sort,
  onSort,
}: TableProps<T>) {
  const wrapRef = useRef<HTMLDivElement>(null);
  const scrolls = useOverflows(wrapRef);
  return (
    // biome-ignore lint/a11y/useSemanticElements: a fieldset groups form controls; this names a scroller.
    <div
      className="ly-table-wrap"
      data-testid={testId}
      ref={wrapRef}
      role="group"
      aria-label={caption}
      tabIndex={scrolls ? 0 : undefined}
    >
      <table className="ly-table">
        <caption className="ly-sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => {
              const active = sort?.key === c.key;
              const ariaSort = active ? (sort.dir === "asc" ? "ascending" : "descending") : undefined;
              return (
                <th
                  key={c.key}
                  scope="col"
                  className={c.sortable && onSort ? `ly-th-sort ${c.className ?? ""}` : c.className}
                  aria-sort={c.sortable ? ariaSort : undefined}
                >
                  {c.sortable && onSort ? (
                    <button
                      type="button"
                      className="ly-sort"
                      data-active={active ? "true" : "false"}
                      onClick={() => onSort(c.key)}
                      data-testid={`sort-${c.key}`}
                    >
                      {c.header}
                      <span className="ly-sort-icon" aria-hidden="true">
                        {active ? (sort.dir === "asc" ? "▲" : "▼") : "↕"}
                      </span>
                    </button>
                  ) : (
                    c.header
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td className="ly-table-empty" colSpan={columns.length}>
                {empty}
              </td>
            </tr>
          ) : (
            rows.map((row) => (
              <tr key={rowKey(row)} className={rowClassName?.(row)} {...rowAttrs?.(row)}>
                {columns.map((c) => (
                  <td key={c.key} className={c.className} data-col={c.key}>
                    {c.render(row)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}
