export interface LockPagerProps {
  page: number;
  pages: number;
  pageSize: number;
  total: number;
  onPage: (page: number) => void;
  /** The table it pages, to name the navigation. */
  label: string;
}

const count = new Intl.NumberFormat("en");

/** "1–25 of 1,000" with previous and next. The buttons stay focusable at either end (aria-disabled). */
export function LockPager({ page, pages, pageSize, total, onPage, label }: LockPagerProps) {
  const first = page * pageSize + 1;
  const last = Math.min(total, (page + 1) * pageSize);
  const atStart = page <= 0;
  const atEnd = page >= pages - 1;
  return (
    <nav className="pager" aria-label={`${label}: pages`} data-testid="lock-pager">
      <button
        type="button"
        className="button small"
        aria-disabled={atStart}
        onClick={() => atStart || onPage(page - 1)}
        data-testid="lock-page-prev"
      >
        Previous
      </button>
      <span className="pager-text" data-testid="lock-page-text">
        {count.format(first)}–{count.format(last)} of {count.format(total)}
      </span>
      <button
        type="button"
        className="button small"
        aria-disabled={atEnd}
        onClick={() => atEnd || onPage(page + 1)}
        data-testid="lock-page-next"
      >
        Next
      </button>
    </nav>
  );
}
