/**
 * The virtual clock's agenda: a binary min-heap ordered by time, then by insertion order, so
 * two events at the same millisecond always run in the order they were scheduled.
 */

interface Entry<T> {
  readonly time: number;
  readonly seq: number;
  readonly item: T;
}

export class EventQueue<T> {
  private readonly heap: Entry<T>[] = [];
  private nextSeq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(time: number, item: T): void {
    const heap = this.heap;
    heap.push({ time, seq: this.nextSeq++, item });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i] as Entry<T>, heap[parent] as Entry<T>)) break;
      swap(heap, i, parent);
      i = parent;
    }
  }

  peekTime(): number | undefined {
    return this.heap[0]?.time;
  }

  pop(): { time: number; item: T } | undefined {
    const heap = this.heap;
    const top = heap[0];
    if (top === undefined) return undefined;
    const last = heap.pop() as Entry<T>;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < heap.length && before(heap[left] as Entry<T>, heap[smallest] as Entry<T>)) smallest = left;
        if (right < heap.length && before(heap[right] as Entry<T>, heap[smallest] as Entry<T>)) smallest = right;
        if (smallest === i) break;
        swap(heap, i, smallest);
        i = smallest;
      }
    }
    return { time: top.time, item: top.item };
  }
}

function before<T>(a: Entry<T>, b: Entry<T>): boolean {
  return a.time < b.time || (a.time === b.time && a.seq < b.seq);
}

function swap<T>(heap: T[], i: number, j: number): void {
  const tmp = heap[i] as T;
  heap[i] = heap[j] as T;
  heap[j] = tmp;
}
