/** One command waiting for its reply. */
interface Waiting {
  readonly deadline: number;
  /** Cleared once the reply (or an error) came. */
  expire: (() => void) | undefined;
}

/**
 * Bounds reply waits with ONE timer for all of them, instead of a `setTimeout` and a
 * `Promise.race` per command. Every wait lasts the same `timeoutMs`, so deadlines are in the order
 * the waits began: a FIFO queue, and a timer armed for its oldest live entry. Replies on one
 * connection come in order, so the settled entries are popped from the front as they settle and
 * the queue stays as long as the commands in flight.
 */
export class ReplyDeadlines {
  readonly #timeoutMs: number;
  #queue: Waiting[] = [];
  #head = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Settles as `pending` does, or rejects with `onTimeout()` when `pending` has not settled
   * `timeoutMs` after this call.
   */
  bound<T>(pending: Promise<T>, onTimeout: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const waiting: Waiting = {
        deadline: performance.now() + this.#timeoutMs,
        expire: () => reject(onTimeout()),
      };
      this.#queue.push(waiting);
      if (this.#timer === undefined) this.#arm(this.#timeoutMs);
      pending.then(
        (value) => {
          this.#settled(waiting);
          resolve(value);
        },
        (error: unknown) => {
          this.#settled(waiting);
          reject(error);
        },
      );
    });
  }

  /** Entries waiting (settled ones not yet popped included), for tests. */
  get size(): number {
    return this.#queue.length - this.#head;
  }

  #settled(waiting: Waiting): void {
    waiting.expire = undefined;
    this.#popSettled();
  }

  #popSettled(): void {
    const queue = this.#queue;
    let head = this.#head;
    while (head < queue.length && queue[head]?.expire === undefined) head++;
    if (head === queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (head > 1024 && head * 2 > queue.length) {
      this.#queue = queue.slice(head);
      this.#head = 0;
    } else {
      this.#head = head;
    }
  }

  #arm(delayMs: number): void {
    // Unref'd: a pending command keeps its own socket (and the process) alive; an idle store
    // must not hold the process open until the last deadline.
    this.#timer = setTimeout(this.#check, Math.max(1, Math.ceil(delayMs)));
    this.#timer.unref();
  }

  readonly #check = (): void => {
    this.#timer = undefined;
    const now = performance.now();
    for (;;) {
      this.#popSettled();
      const oldest = this.#queue[this.#head];
      if (oldest === undefined) return;
      if (oldest.deadline > now) {
        this.#arm(oldest.deadline - now);
        return;
      }
      const expire = oldest.expire;
      oldest.expire = undefined;
      expire?.();
    }
  };
}
