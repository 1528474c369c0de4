/**
 * gpusynth's one worker-thread mechanism: a worker answers named calls, as a remote object
 * would. A protocol is an interface of calls (each takes one argument and returns its reply);
 * the worker implements it with `answerCalls`, the run's thread calls it through a
 * `WorkerThread`. Both the shard workers of a run (shard-workers.ts) and the inventory pool of
 * check-signals (packages/cli/src/inventory-pool.ts) are built on it.
 *
 * The rules, once for everyone:
 * - Calls run in the worker one after another, in the order they were made, except those the
 *   worker marks `immediate` (answered at once, between the slices of a long call: a scrape of
 *   the last tick while the next one simulates).
 * - A call may post events (a tick's encoded scrapes): they reach the thread's `onEvent` before
 *   the call's reply, as messages on one port keep their order.
 * - A call that throws rejects its promise with the worker's stack; a worker that crashes or exits
 *   rejects every call in flight and every later one, and reports it once to `onFailure`.
 * - Closing is bounded: the worker runs its `onClose`, and is terminated if it has not exited in
 *   time.
 */
import { parentPort, Worker } from "node:worker_threads";

/** A protocol: each call's argument and reply (plain data: they cross threads by structured clone). */
export type Calls = { readonly [name: string]: (argument: never) => unknown };

type ArgumentOf<F> = F extends (argument: infer A) => unknown ? A : never;

/** What a worker implements: each call, given its argument and a way to post events before replying. */
/** Posts an event to the thread; the buffers in `transfer` move to it instead of being copied (and are unusable here after). */
export type PostEvent<Event> = (event: Event, transfer?: readonly ArrayBuffer[]) => void;

export type Answers<C extends Calls, Event = never> = {
  readonly [K in keyof C]: (argument: ArgumentOf<C[K]>, post: PostEvent<Event>) => ReturnType<C[K]> | Promise<ReturnType<C[K]>>;
};

type ToWorker = { readonly id: number; readonly call: string; readonly argument: unknown } | { readonly close: true };
type FromWorker =
  | { readonly id: number; readonly reply: unknown }
  | { readonly id: number; readonly error: string }
  | { readonly event: unknown }
  | { readonly closed: true };

const messageOf = (error: unknown) => (error instanceof Error ? (error.stack ?? error.message) : String(error));

export interface AnswerOptions<C extends Calls> {
  /** Calls answered as they come instead of after the calls before them. */
  readonly immediate?: ReadonlyArray<keyof C>;
  /** Runs when the thread closes the worker, after every call made before. */
  readonly onClose?: () => void | Promise<void>;
}

/** The worker's side: answers the thread's calls until it is closed. */
export function answerCalls<C extends Calls, Event = never>(answers: Answers<C, Event>, options: AnswerOptions<C> = {}): void {
  if (parentPort === null) throw new Error("answerCalls runs in a worker thread (see workers/thread.ts)");
  const port = parentPort;
  const post = (message: FromWorker, transfer?: readonly ArrayBuffer[]) =>
    port.postMessage(message, transfer === undefined ? undefined : [...transfer]);
  const postEvent: PostEvent<Event> = (event, transfer) => post({ event }, transfer);
  const immediate = new Set(options.immediate ?? []);
  const answer = async (message: Extract<ToWorker, { id: number }>) => {
    try {
      const handler = answers[message.call] as ((argument: unknown, post: PostEvent<Event>) => unknown) | undefined;
      if (handler === undefined) throw new Error(`no call named "${message.call}"`);
      post({ id: message.id, reply: await handler(message.argument, postEvent) });
    } catch (error) {
      post({ id: message.id, error: messageOf(error) });
    }
  };
  let queue = Promise.resolve();
  port.on("message", (message: ToWorker) => {
    if ("close" in message) {
      queue = queue
        .then(() => options.onClose?.())
        .catch(() => {})
        .then(() => {
          post({ closed: true });
          port.close();
        });
      return;
    }
    if (immediate.has(message.call)) void answer(message);
    else queue = queue.then(() => answer(message));
  });
}

/**
 * The script of a worker beside the calling module: the built one also when the caller runs from
 * its TypeScript source (the tests do; `npm test` builds first), as a worker thread cannot load
 * TypeScript. `relative` names the built file relative to the caller's built module.
 */
export function workerScript(callerUrl: string, relative: string): URL {
  const caller = new URL(callerUrl);
  if (!caller.pathname.endsWith(".ts")) return new URL(relative, caller);
  const at = caller.pathname.lastIndexOf("/src/");
  const built = new URL(caller.href);
  built.pathname = `${caller.pathname.slice(0, at)}/dist/${caller.pathname.slice(at + "/src/".length).replace(/\.ts$/, ".js")}`;
  return new URL(relative, built);
}

export interface WorkerThreadOptions<Event> {
  /** What the worker reads as `workerData`. */
  readonly data: unknown;
  /** Names the worker in errors ("shard 2/8", "inventory of blueprints/platform.yaml"). */
  readonly name: string;
  readonly resourceLimits?: { readonly maxOldGenerationSizeMb: number };
  readonly onEvent?: (event: Event) => void;
  /** Called once when the worker crashes, exits early or a call fails. */
  readonly onFailure?: (error: Error) => void;
}

/** The thread's side: one worker and the calls it owes. */
export class WorkerThread<C extends Calls, Event = never> {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (reply: unknown) => void; reject: (error: Error) => void }>();
  private nextId = 0;
  private failure: Error | undefined;
  private closing = false;
  private readonly closed: Promise<void>;

  constructor(
    script: URL,
    private readonly options: WorkerThreadOptions<Event>,
  ) {
    this.worker = new Worker(script, {
      workerData: options.data,
      ...(options.resourceLimits === undefined ? {} : { resourceLimits: options.resourceLimits }),
    });
    let markClosed = () => {};
    this.closed = new Promise((resolve) => (markClosed = resolve));
    this.worker.on("message", (message: FromWorker) => {
      if ("event" in message) {
        options.onEvent?.(message.event as Event);
      } else if ("closed" in message) {
        markClosed();
      } else {
        const call = this.pending.get(message.id);
        this.pending.delete(message.id);
        if ("error" in message) {
          const error = new Error(`${options.name}: ${message.error}`);
          call?.reject(error);
          this.fail(error);
        } else call?.resolve(message.reply);
      }
    });
    this.worker.on("error", (error) => this.fail(new Error(`${options.name}: ${messageOf(error)}`)));
    this.worker.on("exit", (code) => {
      markClosed();
      if (!this.closing || this.pending.size > 0) this.fail(new Error(`${options.name}: the worker exited with code ${code}`));
    });
  }

  private fail(error: Error): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    for (const call of this.pending.values()) call.reject(error);
    this.pending.clear();
    this.options.onFailure?.(error);
  }

  /** Calls `name` in the worker; the reply, or the worker's error. */
  call<K extends keyof C & string>(name: K, argument: ArgumentOf<C[K]>): Promise<Awaited<ReturnType<C[K]>>> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (reply: unknown) => void, reject });
      this.worker.postMessage({ id, call: name, argument } satisfies ToWorker);
    });
  }

  /** Closes the worker after the calls made before: its `onClose` runs, bounded by `waitMs`, then it is terminated. */
  async close(waitMs: number): Promise<void> {
    this.closing = true;
    if (this.failure === undefined) {
      this.worker.postMessage({ close: true } satisfies ToWorker);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.closed, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    }
    await this.worker.terminate();
  }
}
