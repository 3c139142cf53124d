import type { Key, ReactNode } from "react";

export interface Column<T> {
  key: string;
  header: ReactNode;
  render: (row: T) => ReactNode;
  className?: string;
}

export interface TableProps<T> {
  columns: readonly Column<T>[];
  rows: readonly T[];
  rowKey: (row: T) => Key;
  rowClassName?: (row: T) => string | undefined;
  /** Extra attributes per row, e.g. `data-testid` or `data-*` hooks for tests. */
  rowAttrs?: (row: T) => Record<`data-${string}`, string | number | undefined>;
  empty: ReactNode;
  caption?: string;
  testId?: string;
}

/** Scrolls sideways on narrow screens rather than squeezing the columns. */
export function Table<T>({
  columns,
  rows,
  rowKey,
  rowClassName,
  rowAttrs,
  empty,
  caption,
  testId,
}: TableProps<T>) {
  return (
    <div className="ly-table-wrap" data-testid={testId}>
      <table className="ly-table">
        {caption ? <caption className="ly-sr-only">{caption}</caption> : null}
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.key} scope="col" className={c.className}>
                {c.header}
              </th>
            ))}
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
