/** A binary min-heap under a strict "comes before" order: the allocate action's heap of queues (the agenda has its own: event-queue.ts). */
export class MinHeap<T> {
  private readonly heap: T[] = [];

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.heap.length;
  }

  peek(): T | undefined {
    return this.heap[0];
  }

  push(item: T): void {
    const heap = this.heap;
    heap.push(item);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(heap[i] as T, heap[parent] as T)) break;
      swap(heap, i, parent);
      i = parent;
    }
  }

  pop(): T | undefined {
    const heap = this.heap;
    const top = heap[0];
    if (top === undefined) return undefined;
    const last = heap.pop() as T;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < heap.length && this.before(heap[left] as T, heap[smallest] as T)) smallest = left;
        if (right < heap.length && this.before(heap[right] as T, heap[smallest] as T)) smallest = right;
        if (smallest === i) break;
        swap(heap, i, smallest);
        i = smallest;
      }
    }
    return top;
  }
}

function swap<T>(heap: T[], i: number, j: number): void {
  const tmp = heap[i] as T;
  heap[i] = heap[j] as T;
  heap[j] = tmp;
}
