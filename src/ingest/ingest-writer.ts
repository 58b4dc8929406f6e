import { Worker } from 'node:worker_threads'
import type { PortalContext } from '../context.ts'
import { ProblemError } from '../http/problem.ts'
import { observeCommit, trackBacklog } from '../metrics/metrics.ts'
import type { GroupCommitter } from '../storage/group-commit.ts'
import { PoolExhaustedError } from '../storage/storage.ts'
import { WriterLock } from '../storage/sqlite/writer-lock.ts'
import type { IngestBatch } from './write-batches.ts'

/** A batch as it crosses to the writer's thread: the events' payloads as the JSON text they are stored as. */
export interface BatchMessage {
  id: number
  batch: Omit<IngestBatch, 'accepted'> & { events: { type: string; id: string; ts: number; receivedAt: number; dataJson: string }[] }
}

export type WriterAnswer =
  | { kind: 'written'; id: number; stored: boolean; forgotApiKeys: boolean }
  | { kind: 'failed'; id: number; error: { message: string; code?: string; name: string; pool?: ConstructorParameters<typeof PoolExhaustedError> } }
  | { kind: 'commit'; batches: number; seconds: number }
  | { kind: 'ready' }
  | { kind: 'closed' }

/** Where the bundles (bin/server-bundle.js, bin/test.js) put the writer thread's script; from the sources it is the TypeScript file. */
declare const PORTAL_INGEST_WRITER_THREAD: string | undefined

/**
 * The ingest path's group commit on a worker thread of its own (src/ingest/ingest-writer-thread.ts), for a
 * database whose writes would otherwise run on the event loop's thread (SQLite's): the event loop's thread
 * keeps HTTP, authentication, signatures, parsing and validation, and sends each accepted batch as one
 * message; the writer runs the statements and the commit on the other core and answers once the commit is
 * on disk. Both threads write to the one file, taking turns through `writerLock` (WriterLock).
 */
export class IngestWriter implements GroupCommitter<IngestBatch, boolean> {
  private worker: Worker | undefined
  private readonly pending = new Map<number, { resolve(stored: boolean): void; reject(error: unknown): void }>()
  private nextId = 0
  private weight = 0
  private readonly untrackBacklog = trackBacklog('ingest', () => this.weight)

  private constructor(
    private readonly ctx: PortalContext,
    private readonly writerLock: SharedArrayBuffer,
  ) {}

  /** Resolves once the writer's thread has opened the database: the portal listens with its writer ready. */
  static async start(ctx: PortalContext, writerLock: SharedArrayBuffer): Promise<IngestWriter> {
    const writer = new IngestWriter(ctx, writerLock)
    const worker = (writer.worker = writer.spawn())
    await new Promise<void>((resolve, reject) => {
      const ready = (answer: WriterAnswer) => answer.kind === 'ready' && (worker.off('exit', failed), resolve())
      const failed = (code: number) => (worker.off('message', ready), reject(new Error(`the ingest writer's thread exited before it was ready (code ${code})`)))
      worker.on('message', ready).once('exit', failed)
    })
    return writer
  }

  get backlog() {
    return this.weight
  }

  write(batch: IngestBatch): Promise<boolean> {
    const weight = batch.accepted.length
    this.weight += weight
    const id = this.nextId++
    const events = batch.accepted.map(({ module, event, dataJson }) => ({ type: module.type, id: event.id, ts: event.ts, receivedAt: event.receivedAt, dataJson }))
    const message: BatchMessage = { id, batch: { projectId: batch.projectId, key: batch.key, response: batch.response, events } }
    return new Promise<boolean>((resolve, reject) => {
      const worker = (this.worker ??= this.spawn())
      if (this.pending.size === 0) worker.ref()
      this.pending.set(id, { resolve, reject })
      worker.postMessage(message)
    }).finally(() => (this.weight -= weight))
  }

  async close(): Promise<void> {
    this.untrackBacklog()
    const worker = this.worker
    if (!worker) return
    worker.ref()
    const exited = new Promise((resolve) => worker.once('exit', resolve))
    // the writer answers every batch it was sent before it closes its storage
    worker.postMessage({ close: true })
    await exited
  }

  private spawn(): Worker {
    const lock = new WriterLock(this.writerLock)
    const holder = lock.newHolder()
    const workerData = { config: this.ctx.config, writerThread: { lock: this.writerLock, holder } }
    const worker =
      typeof PORTAL_INGEST_WRITER_THREAD === 'string'
        ? new Worker(new URL(PORTAL_INGEST_WRITER_THREAD, import.meta.url), { workerData })
        : // from the TypeScript sources: the thread loads them through tsx, as `portal` does without its bundle
          new Worker(`import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then(({ register }) => (register(), import(${JSON.stringify(new URL('./ingest-writer-thread.ts', import.meta.url).href)})))`, { eval: true, workerData })
    worker.unref()
    worker.on('message', (answer: WriterAnswer) => void this.answered(worker, answer))
    worker.on('error', (error) => this.ctx.log.error({ err: error }, 'the ingest writer thread failed'))
    worker.on('exit', () => {
      if (this.worker !== worker) return
      this.worker = undefined
      // It can no longer take or give its turn at the database; a batch written next starts a new writer.
      lock.abandon(holder)
      const stopped = new ProblemError(503, 'database_unavailable', 'the ingest writer stopped before the batch was committed; retry shortly', { 'retry-after': '1' })
      for (const waiting of this.pending.values()) waiting.reject(stopped)
      this.pending.clear()
    })
    return worker
  }

  private async answered(worker: Worker, answer: WriterAnswer) {
    if (answer.kind === 'commit') return observeCommit('ingest', answer.batches, answer.seconds)
    if (answer.kind === 'ready') return
    if (answer.kind === 'closed') return void (this.worker = undefined)
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
