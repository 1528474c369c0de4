/**
 * The virtual clock's agenda: a binary min-heap ordered by time, then by insertion order, so
 * two events at the same millisecond always run in the order they were scheduled.
 */
import { MinHeap } from "./min-heap.js";

interface Entry<T> {
  readonly time: number;
  readonly seq: number;
  readonly item: T;
}

export class EventQueue<T> {
  private readonly heap = new MinHeap<Entry<T>>((a, b) => a.time < b.time || (a.time === b.time && a.seq < b.seq));
  private nextSeq = 0;

  get size(): number {
    return this.heap.size;
  }

  push(time: number, item: T): void {
    this.heap.push({ time, seq: this.nextSeq++, item });
  }

  peekTime(): number | undefined {
    return this.heap.peek()?.time;
  }

  pop(): { time: number; item: T } | undefined {
    const top = this.heap.pop();
    return top === undefined ? undefined : { time: top.time, item: top.item };
  }
}
