/**
 * Keeps the host's event loop alive while the executor has work in flight, and only then. Pool
 * members' pipes and sockets are unref'd, so a host that forgets `dispose()` still exits (its
 * workerd processes die with it, see spawn-workerd.ts), while a pending `execute()` is never
 * abandoned by an event loop that thinks it has nothing left to do.
 */
export class LoopHold {
  #count = 0;
  #timer: NodeJS.Timeout | undefined;

  async during<T>(work: () => Promise<T>): Promise<T> {
    this.#count += 1;
    this.#timer ??= setInterval(() => {}, 1 << 30);
    try {
      return await work();
    } finally {
      this.#count -= 1;
      if (this.#count === 0) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    }
  }
}
