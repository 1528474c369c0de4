/**
 * The virtual clock's agenda: a binary min-heap ordered by time, then by insertion order, so
 * two events at the same millisecond always run in the order they were scheduled.
 *
 * A heap of its own rather than MinHeap's: every event of a run passes through it, and MinHeap's
 * order, a function shared with allocate's heap of queues, is called through a site that sees
 * both and so is never inlined (the agenda's comparisons were 4 % of a month's simulation).
 */

interface Entry<T> {
  readonly time: number;
  readonly seq: number;
  readonly item: T;
}

/** Whether `a` comes before `b`: earlier, or as early and scheduled first. */
function before<T>(a: Entry<T>, b: Entry<T>): boolean {
  return a.time < b.time || (a.time === b.time && a.seq < b.seq);
}

export class EventQueue<T> {
  private readonly heap: Entry<T>[] = [];
  private nextSeq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(time: number, item: T): void {
    const heap = this.heap;
    const entry: Entry<T> = { time, seq: this.nextSeq++, item };
    let i = heap.length;
    heap.push(entry);
    // Up: parents after the new entry move down a level until its place is found.
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const above = heap[parent] as Entry<T>;
      if (!before(entry, above)) break;
      heap[i] = above;
      i = parent;
    }
    heap[i] = entry;
  }

  peekTime(): number | undefined {
    return this.heap[0]?.time;
  }

  /** The next event: its time and item (the entry itself, read-only). */
  pop(): { readonly time: number; readonly item: T } | undefined {
    const heap = this.heap;
    const top = heap[0];
    if (top === undefined) return undefined;
    const last = heap.pop() as Entry<T>;
    const n = heap.length;
    if (n === 0) return top;
    // Down: the last entry sinks from the root, smaller children moving up, until it is in place.
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      let child = left;
      if (right < n && before(heap[right] as Entry<T>, heap[left] as Entry<T>)) child = right;
      const smaller = heap[child] as Entry<T>;
      if (!before(smaller, last)) break;
      heap[i] = smaller;
      i = child;
    }
    heap[i] = last;
    return top;
  }
}
