/**
 * A list that renders only the rows in view: 24,000 rulesets stay fast because the DOM holds a
 * few dozen rows, reused as the user scrolls. Rows have a fixed height. The container is a
 * `role=listbox`-free scroll region; each row is focusable content, and arrow keys move focus.
 */
export interface VirtualListOptions<T> {
  container: HTMLElement;
  rowHeight: number;
  render(item: T, index: number, row: HTMLElement): void;
  /** Extra rows drawn above and below the visible ones. */
  overscan?: number;
}

export class VirtualList<T> {
  private items: readonly T[] = [];
  private readonly spacer: HTMLElement;
  private readonly rows: HTMLElement[] = [];
  private frame = 0;

  constructor(private readonly o: VirtualListOptions<T>) {
    o.container.style.overflowY = 'auto';
    o.container.style.position = 'relative';
    this.spacer = document.createElement('div');
    this.spacer.style.position = 'relative';
    o.container.append(this.spacer);
    o.container.addEventListener('scroll', () => this.schedule());
    new ResizeObserver(() => this.schedule()).observe(o.container);
    o.container.addEventListener('keydown', (e) => this.onKey(e));
  }

  setItems(items: readonly T[]): void {
    // A new result set starts at its top.
    if (items !== this.items) this.o.container.scrollTop = 0;
    this.items = items;
    this.spacer.style.height = `${items.length * this.o.rowHeight}px`;
    this.draw();
  }

  get length(): number {
    return this.items.length;
  }

  /** Re-renders the visible rows (after the items' state changed). */
  refresh(): void {
    this.draw();
  }

  scrollToIndex(index: number): void {
    const top = index * this.o.rowHeight;
    const c = this.o.container;
    if (top < c.scrollTop) c.scrollTop = top;
    else if (top + this.o.rowHeight > c.scrollTop + c.clientHeight)
      c.scrollTop = top + this.o.rowHeight - c.clientHeight;
    this.draw();
  }

  private schedule(): void {
    if (this.frame !== 0) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  private draw(): void {
    const { rowHeight, render } = this.o;
    const overscan = this.o.overscan ?? 8;
    const c = this.o.container;
    const first = Math.max(0, Math.floor(c.scrollTop / rowHeight) - overscan);
    const last = Math.min(
      this.items.length,
      Math.ceil((c.scrollTop + (c.clientHeight || 600)) / rowHeight) + overscan,
    );
    const needed = last - first;
    // Rows are re-rendered in place; keep keyboard focus on the same item.
    const focusedRow = (document.activeElement as HTMLElement | null)?.closest<HTMLElement>(
      '.vrow',
    );
    const focusedIndex =
      focusedRow && this.rows.includes(focusedRow) ? Number(focusedRow.dataset.index) : -1;
    while (this.rows.length < needed) {
      const row = document.createElement('div');
      row.className = 'vrow';
      row.style.position = 'absolute';
      row.style.left = '0';
      row.style.right = '0';
      row.style.height = `${rowHeight}px`;
      this.spacer.append(row);
      this.rows.push(row);
    }
    this.rows.forEach((row, i) => {
      const index = first + i;
      if (i >= needed) {
        row.hidden = true;
        return;
      }
      row.hidden = false;
      row.style.top = `${index * rowHeight}px`;
      row.dataset.index = String(index);
      render(this.items[index] as T, index, row);
      if (index === focusedIndex) row.querySelector<HTMLElement>('input, button, a')?.focus();
    });
  }

  /** Up/Down move focus between rows' first control, scrolling rows into existence. */
  private onKey(e: KeyboardEvent): void {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    const row = (e.target as HTMLElement).closest<HTMLElement>('.vrow');
    if (row === null) return;
    e.preventDefault();
    const next = Number(row.dataset.index) + (e.key === 'ArrowDown' ? 1 : -1);
    if (next < 0 || next >= this.items.length) return;
    this.scrollToIndex(next);
    const target = this.rows.find((r) => !r.hidden && Number(r.dataset.index) === next);
    target?.querySelector<HTMLElement>('input, button, a')?.focus();
  }
}
