import { Worker } from 'node:worker_threads'
import { betterSqlite3Path } from './better-sqlite3.ts'

// A read-only connection to the portal's SQLite file in a worker thread: reads outside a transaction run
// here, on the second core, while the event loop goes on answering requests and the main thread's connection
// goes on writing (WAL lets readers and the writer work at once). Plain JavaScript, evaluated, so the worker
// needs no TypeScript loader whichever way the portal was started.
const READER_WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const SQLite = require(workerData.driver)
// A file that cannot be opened fails each read with SQLite's error, code and all, as the writer's would.
let database, opening
try {
  database = new SQLite(workerData.file, { readonly: true })
  for (const pragma of workerData.pragmas) database.pragma(pragma)
} catch (error) {
  opening = error
}

const cache = new Map()
function prepare(sql) {
  let statement = cache.get(sql)
  if (!statement) {
    if (cache.size >= workerData.cacheSize) cache.delete(cache.keys().next().value)
    statement = database.prepare(sql)
    cache.set(sql, statement)
  }
  return statement
}
// A Buffer crosses threads as a plain Uint8Array; better-sqlite3 binds Buffers.
function bound(parameters) {
  for (let i = 0; i < parameters.length; i++) {
    const value = parameters[i]
    if (value instanceof Uint8Array && !Buffer.isBuffer(value)) parameters[i] = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  }
  return parameters
}
function hasBlobs(rows) {
  for (const row of rows) for (const key in row) if (Buffer.isBuffer(row[key])) return true
  return false
}
parentPort.on('message', (message) => {
  if (message.close) {
    database?.close()
    parentPort.postMessage({ id: message.id })
    return parentPort.close()
  }
  let answer
  try {
    if (opening) throw opening
    const rows = prepare(message.sql).all(bound(message.parameters))
    answer = { id: message.id, rows, blobs: hasBlobs(rows) }
  } catch (error) {
    answer = { id: message.id, error: { message: error.message, code: error.code, name: error.name } }
  }
  parentPort.postMessage(answer)
})
`

interface Answer {
  id: number
  rows?: Record<string, unknown>[]
  blobs?: boolean
  error?: { message: string; code?: string; name: string }
}

/** The main thread's end of the read-only connection in a worker thread; it answers one statement at a time, in order. */
export class SqliteReader {
  private readonly worker: Worker
  private readonly pending = new Map<number, { resolve(answer: Answer): void; reject(error: unknown): void }>()
  private nextId = 0
  private closing = false
  /** why the worker is gone, once it is: later statements fail with it instead of waiting forever */
  private gone: Error | undefined

  /** `pragmas` are set on the connection as it opens, in order (`busy_timeout = 5000`, say); it keeps `cacheSize` prepared statements. */
  constructor(file: string, pragmas: string[], cacheSize: number) {
    this.worker = new Worker(READER_WORKER, { eval: true, workerData: { file, pragmas, driver: betterSqlite3Path, cacheSize } })
    // An idle reader does not keep the process alive; one with a statement under way does.
    this.worker.unref()
    this.worker.on('message', (answer: Answer) => this.answered(answer))
    this.worker.on('error', (error) => this.failAll((this.gone = error)))
    this.worker.on('exit', (code) => this.failAll((this.gone ??= new Error(`the SQLite reader's worker thread exited (code ${code})`))))
  }

  /** The rows of a statement that only reads. */
  async query(sql: string, parameters: readonly unknown[]): Promise<Record<string, unknown>[]> {
    const answer = await this.send({ sql, parameters })
    const rows = answer.rows!
    if (answer.blobs) {
      for (const row of rows) {
        for (const key in row) {
          const value = row[key]
          // a view of the bytes that crossed, not a copy (the outbox's blocks are read this way)
          if (value instanceof Uint8Array) row[key] = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
        }
      }
    }
    return rows
  }

  async close(): Promise<void> {
    if (this.gone) return
    this.closing = true
    this.worker.ref()
    const exited = new Promise((resolve) => this.worker.once('exit', resolve))
    await this.send({ close: true }).catch(() => {})
    await exited
  }

  private send(request: { sql: string; parameters: readonly unknown[] } | { close: true }): Promise<Answer> {
    const id = this.nextId++
    return new Promise<Answer>((resolve, reject) => {
      if (this.gone) return reject(this.gone)
      if (this.pending.size === 0) this.worker.ref()
      this.pending.set(id, { resolve, reject })
      this.worker.postMessage({ ...request, id })
    })
  }

  private answered(answer: Answer) {
    const waiting = this.pending.get(answer.id)
    if (!waiting) return
    this.pending.delete(answer.id)
    if (this.pending.size === 0 && !this.closing) this.worker.unref()
    if (answer.error) waiting.reject(Object.assign(new Error(answer.error.message), { name: answer.error.name, code: answer.error.code }))
    else waiting.resolve(answer)
  }

  private failAll(error: unknown) {
    for (const waiting of this.pending.values()) waiting.reject(error)
    this.pending.clear()
  }
}
