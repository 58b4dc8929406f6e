/// <reference lib="es2024.sharedmemory" />
// Atomics.waitAsync: in Node since 16, in TypeScript's ES2024 lib.

/**
 * Turns at SQLite's one writer between the threads of one process that each hold a writing connection to
 * the same file (the event loop's thread and the ingest writer, src/ingest/ingest-writer.ts). Taken before
 * a transaction begins, so that SQLite's own lock is never contended among them: its busy handler sleeps
 * on the calling thread, and on the event loop's thread that sleep would stall every request. Waiting here
 * is asynchronous on every thread. First come, first served (a ticket lock over shared memory), so a
 * thread committing back to back cannot starve the other.
 */
export class WriterLock {
  private readonly words: Int32Array

  /** `shared` comes from another thread's `WriterLock.shared`; without it, a new lock. */
  constructor(shared?: SharedArrayBuffer) {
    this.words = new Int32Array(shared ?? new SharedArrayBuffer(WORDS * Int32Array.BYTES_PER_ELEMENT))
    if (!shared) {
      Atomics.store(this.words, ABANDONED, -1)
      for (let holder = WriterLock.MAIN; holder <= MAX_HOLDER; holder++) Atomics.store(this.words, WAITING + holder, -1)
    }
  }

  /** A name for a new thread that takes turns (the event loop's is WriterLock.MAIN). */
  newHolder(): number {
    const holder = Atomics.add(this.words, HOLDERS, 1) + WriterLock.MAIN + 1
    if (holder > MAX_HOLDER) throw new Error(`at most ${MAX_HOLDER - WriterLock.MAIN} threads take turns at one SQLite writer`)
    return holder
  }

  /** What another thread passes to `new WriterLock()` to take turns with this one. */
  get shared(): SharedArrayBuffer {
    return this.words.buffer as SharedArrayBuffer
  }

  /**
   * Resolves when this caller's turn has come. `holder` names the thread (WriterLock.MAIN or a `newHolder()`),
   * which takes one turn at a time, for `abandon`.
   */
  async acquire(holder: number): Promise<void> {
    const ticket = Atomics.add(this.words, NEXT_TICKET, 1)
    Atomics.store(this.words, WAITING + holder, ticket)
    for (;;) {
      const serving = Atomics.load(this.words, SERVING)
      if (serving === ticket) break
      const { async, value } = Atomics.waitAsync(this.words, SERVING, serving)
      if (async) await value
    }
    Atomics.store(this.words, WAITING + holder, -1)
    Atomics.store(this.words, HOLDER, holder)
  }

  /** Whether a thread holds the lock or waits for it: a caller about to take it may have to wait. */
  get taken(): boolean {
    return Atomics.load(this.words, NEXT_TICKET) !== Atomics.load(this.words, SERVING)
  }

  release(): void {
    Atomics.store(this.words, HOLDER, NOBODY)
    this.serveNext()
  }

  /**
   * For a thread that has ended (it can neither release its turn nor take the one it waited for): lets the
   * next caller in. Another thread calls it, once the ended one's `exit` was seen.
   */
  abandon(holder: number): void {
    if (Atomics.compareExchange(this.words, HOLDER, holder, NOBODY) === holder) return this.serveNext()
    const waited = Atomics.exchange(this.words, WAITING + holder, -1)
    if (waited < 0) return
    Atomics.store(this.words, ABANDONED, waited)
    // its turn may have come already, with nobody to take it
    if (Atomics.compareExchange(this.words, SERVING, waited, waited) === waited) this.serveNext()
  }

  private serveNext(): void {
    let next = Atomics.add(this.words, SERVING, 1) + 1
    // a turn that nobody will take is passed over
    if (Atomics.load(this.words, ABANDONED) === next) Atomics.store(this.words, SERVING, ++next)
    Atomics.notify(this.words, SERVING)
  }

  static readonly MAIN = 1
}

const NOBODY = 0
const NEXT_TICKET = 0
const SERVING = 1
const HOLDER = 2
const ABANDONED = 3
const HOLDERS = 4
/** WAITING + holder (holders count from 1, so past HOLDERS): the ticket that holder waits with, or -1 */
const WAITING = HOLDERS
const MAX_HOLDER = 64
const WORDS = WAITING + MAX_HOLDER + 1
