import { Worker } from 'node:worker_threads'
import type { Config } from '../config.ts'
import type { PortalContext } from '../context.ts'
import { ProblemError } from '../http/problem.ts'
import { observeCommit, trackBacklog } from '../metrics/metrics.ts'
import type { GroupCommitter } from '../storage/group-commit.ts'
import { PoolExhaustedError, type WriterThread } from '../storage/storage.ts'
import { WriterLock } from '../storage/sqlite/writer-lock.ts'
import { packBatch, type PackedBatch } from './packed-batch.ts'
import type { IngestBatch } from './write-batches.ts'

/**
 * What the event loop's thread tells the writer's: open a portal's database, write batches to it, close it. The
 * batches of one turn of the event loop travel in one message, and the answers of one turn of the writer's loop in
 * one array: a message each way per Sentry envelope was a tenth of the event loop's time at full intake.
 */
export type WriterMessage =
  | { kind: 'open'; config: Config; writerThread: WriterThread }
  | { kind: 'batches'; batches: { id: number; batch: PackedBatch }[] }
  | { kind: 'close' }

export type WriterAnswer =
  | { kind: 'ready' }
  | { kind: 'unopened'; error: { message: string; name: string; code?: string } }
  | { kind: 'written'; id: number; stored: boolean; forgotApiKeys: boolean }
  | { kind: 'failed'; id: number; error: { message: string; code?: string; name: string; pool?: ConstructorParameters<typeof PoolExhaustedError> } }
  | { kind: 'commit'; batches: number; seconds: number }
  | { kind: 'closed' }

/** Where the bundles (bin/server-bundle.js, bin/test.js) put the writer thread's script; from the sources it is the TypeScript file. */
declare const PORTAL_INGEST_WRITER_THREAD: string | undefined

/**
 * Writer threads whose portal has closed, kept (unreferenced) for the next portal of this process: loading a
 * thread's code takes about 0.4 s of CPU, and the tests start hundreds of portals.
 */
const idleThreads: Worker[] = []
const MAX_IDLE_THREADS = 2

function newThread(): Worker {
  let worker: Worker
  if (typeof PORTAL_INGEST_WRITER_THREAD === 'string') worker = new Worker(new URL(PORTAL_INGEST_WRITER_THREAD, import.meta.url))
  else {
    // from the TypeScript sources: the thread loads them through tsx, as `portal` does without its bundle
    const [tsx, script] = [import.meta.resolve('tsx/esm/api'), new URL('./ingest-writer-thread.ts', import.meta.url).href].map((url) => JSON.stringify(url))
    worker = new Worker(`import(${tsx}).then(({ register }) => (register(), import(${script})))`, { eval: true })
  }
  worker.once('exit', () => idleThreads.includes(worker) && idleThreads.splice(idleThreads.indexOf(worker), 1))
  return worker
}

/**
 * The ingest path's group commit on a worker thread of its own (src/ingest/ingest-writer-thread.ts), for a
 * database whose writes would otherwise run on the event loop's thread (SQLite's): the event loop's thread
 * keeps HTTP, authentication, signatures, parsing and validation, and sends each accepted batch as one
 * message; the writer runs the statements and the commit on the other core and answers once the commit is
 * on disk. Both threads write to the one file, taking turns through `writerLock` (WriterLock).
 */
export class IngestWriter implements GroupCommitter<IngestBatch, boolean> {
  private thread: { worker: Worker; detach(): void } | undefined
  private readonly pending = new Map<number, { resolve(stored: boolean): void; reject(error: unknown): void }>()
  /** for `start`: settles when the thread has opened the database, or could not */
  private opened: { resolve(): void; reject(error: Error): void } | undefined
  /** for `close`: called when the thread has closed the database, or ended */
  private closed: (() => void) | undefined
  private nextId = 0
  private weight = 0
  /** batches written in this turn of the event loop, posted together at its end */
  private outgoing: { id: number; batch: PackedBatch }[] = []
  private readonly untrackBacklog = trackBacklog('ingest', () => this.weight)

  private constructor(
    private readonly ctx: PortalContext,
    private readonly writerLock: SharedArrayBuffer,
  ) {}

  /** Resolves once the writer's thread has opened the database: the portal listens with its writer ready. */
  static async start(ctx: PortalContext, writerLock: SharedArrayBuffer): Promise<IngestWriter> {
    const writer = new IngestWriter(ctx, writerLock)
    // referenced while it opens: nothing else may keep the process alive while the portal starts
    const { worker } = writer.open()
    worker.ref()
    try {
      await new Promise<void>((resolve, reject) => (writer.opened = { resolve, reject }))
    } catch (error) {
      // a portal that cannot start must not be kept alive by its writer's thread
      writer.untrackBacklog()
      await worker.terminate()
      throw error
    }
    worker.unref()
    return writer
  }

  get backlog() {
    return this.weight
  }

  write(batch: IngestBatch): Promise<boolean> {
    const weight = batch.accepted.length
    this.weight += weight
    const id = this.nextId++
    const packed = packBatch(batch)
    return new Promise<boolean>((resolve, reject) => {
      // after a thread died, the next batch opens the database on another; it waits there for the opening
      const { worker } = this.thread ?? this.open()
      if (this.pending.size === 0) worker.ref()
      this.pending.set(id, { resolve, reject })
      this.outgoing.push({ id, batch: packed })
      if (this.outgoing.length === 1) setImmediate(() => this.flush())
    }).finally(() => (this.weight -= weight))
  }

  private flush() {
    if (this.outgoing.length === 0 || !this.thread) return
    this.thread.worker.postMessage({ kind: 'batches', batches: this.outgoing } satisfies WriterMessage)
    this.outgoing = []
  }

  async close(): Promise<void> {
    this.untrackBacklog()
    const thread = this.thread
    if (!thread) return
    thread.worker.ref()
    this.flush()
    // the thread answers every batch it was sent before it closes the database
    await new Promise<void>((resolve) => {
      this.closed = resolve
      thread.worker.postMessage({ kind: 'close' } satisfies WriterMessage)
    })
    // a thread that died meanwhile has been let go already
    if (this.thread !== thread) return
    this.thread = undefined
    thread.detach()
    if (idleThreads.length >= MAX_IDLE_THREADS) return void (await thread.worker.terminate())
    thread.worker.unref()
    idleThreads.push(thread.worker)
  }

  private open(): NonNullable<IngestWriter['thread']> {
    const worker = idleThreads.pop() ?? newThread()
    const lock = new WriterLock(this.writerLock)
    const holder = lock.newHolder()
    const onMessage = (answers: WriterAnswer[]) => {
      for (const answer of answers) void this.answered(worker, answer)
    }
    const onError = (error: Error) => this.ctx.log.error({ err: error }, 'the ingest writer thread failed')
    const onExit = (code: number) => {
      this.thread = undefined
      // It can no longer take or give its turn at the database; a batch written next opens it on a new thread.
      lock.abandon(holder)
      this.opened?.reject(new Error(`the ingest writer's thread exited before it opened the database (code ${code})`))
      this.closed?.()
      const stopped = new ProblemError(503, 'database_unavailable', 'the ingest writer stopped before the batch was committed; retry shortly', { 'retry-after': '1' })
      for (const waiting of this.pending.values()) waiting.reject(stopped)
      this.pending.clear()
      // refused above: never sent to the next thread
      this.outgoing = []
    }
    worker.on('message', onMessage).on('error', onError).on('exit', onExit)
    const detach = () => worker.off('message', onMessage).off('error', onError).off('exit', onExit)
    worker.unref()
    worker.postMessage({ kind: 'open', config: this.ctx.config, writerThread: { lock: this.writerLock, holder, columnarTables: this.ctx.storage.columnarTables ?? [] } } satisfies WriterMessage)
    return (this.thread = { worker, detach })
  }

  private async answered(worker: Worker, answer: WriterAnswer) {
    if (answer.kind === 'commit') return observeCommit('ingest', answer.batches, answer.seconds)
    if (answer.kind === 'ready') return this.opened?.resolve()
    // with its code, which tells an outage (a full disk at start) from a bug
    if (answer.kind === 'unopened') return this.opened?.reject(Object.assign(new Error(answer.error.message), { name: answer.error.name, code: answer.error.code }))
    if (answer.kind === 'closed') return this.closed?.()
    const waiting = this.pending.get(answer.id)
    if (!waiting) return
    this.pending.delete(answer.id)
    if (this.pending.size === 0) worker.unref()
    if (answer.kind === 'failed') {
      const { message, name, code, pool } = answer.error
      return waiting.reject(pool ? new PoolExhaustedError(...pool) : Object.assign(new Error(message), { name, code }))
    }
    // a tenant event changed a project's ingest limit: forgotten here, and told to the other portals, before the 200
    if (answer.forgotApiKeys) await this.ctx.apiKeyPrincipals.forget()
    waiting.resolve(answer.stored)
  }
}
