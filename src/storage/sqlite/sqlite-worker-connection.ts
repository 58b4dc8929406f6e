import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

const STATEMENT_CACHE_SIZE = 500

// The portal's one SQLite connection lives in this worker thread: its statements (parsing, B-tree
// work, the WAL writes) run on the second core while the event loop reads, checks and answers
// requests. One message a statement, or one for all the rows of a list write. Plain JavaScript,
// evaluated, so the worker needs no TypeScript loader whichever way the portal was started.
const CONNECTION_WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const SQLite = require(workerData.driver)
const database = new SQLite(workerData.file)
for (const pragma of workerData.pragmas) database.pragma(pragma)

// Kysely prepares every query anew; most of the portal's statements repeat, and preparing is not free.
const cache = new Map()
const TRANSACTION_CONTROL = /^\\s*(begin|commit|end|rollback|savepoint|release)\\b/i
function prepare(sql) {
  let entry = cache.get(sql)
  if (!entry) {
    if (cache.size >= workerData.cacheSize) cache.delete(cache.keys().next().value)
    const statement = database.prepare(sql)
    // What a transaction wrote is marked by the statements inside it, not by its COMMIT.
    entry = { statement, writes: !statement.readonly && !TRANSACTION_CONTROL.test(sql) }
    cache.set(sql, entry)
  }
  return entry
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
function run(message) {
  switch (message.op) {
    case 'query': {
      const { statement, writes } = prepare(message.sql)
      if (statement.reader) {
        const rows = statement.all(bound(message.parameters))
        return { rows, blobs: hasBlobs(rows), wrote: writes }
      }
      const { changes, lastInsertRowid } = statement.run(bound(message.parameters))
      return { changes, lastInsertRowid, wrote: writes }
    }
    case 'runEach': {
      const { statement, writes } = prepare(message.sql)
      for (const parameters of message.parameterLists) statement.run(bound(parameters))
      return { wrote: writes }
    }
    case 'exec':
      database.exec(message.sql)
      return { wrote: true }
    // SQLite rolls a transaction back by itself when its COMMIT fails on a full disk or an I/O error.
    case 'rollback':
      if (database.inTransaction) database.exec('rollback')
      return {}
    case 'close':
      database.close()
      return {}
  }
}
parentPort.on('message', (message) => {
  let answer
  try {
    answer = run(message)
  } catch (error) {
    answer = { error: { message: error.message, code: error.code, name: error.name } }
  }
  answer.id = message.id
  answer.inTransaction = message.op !== 'close' && database.inTransaction
  parentPort.postMessage(answer)
  if (message.op === 'close') parentPort.close()
})
`

interface Answer {
  id: number
  inTransaction: boolean
  wrote?: boolean
  rows?: Record<string, unknown>[]
  blobs?: boolean
  changes?: number
  lastInsertRowid?: number | bigint
  error?: { message: string; code?: string; name: string }
}

type Request =
  | { op: 'query'; sql: string; parameters: readonly unknown[] }
  | { op: 'runEach'; sql: string; parameterLists: unknown[][] }
  | { op: 'exec'; sql: string }
  | { op: 'rollback' }
  | { op: 'close' }

/**
 * The main thread's end of a SQLite connection held by a worker thread. It does not serialise callers:
 * the portal's driver hands the connection to one query or transaction at a time, as with any one
 * connection; the worker answers in order.
 */
export class SqliteWorkerConnection {
  private readonly worker: Worker
  private readonly pending = new Map<number, { resolve(answer: Answer): void; reject(error: unknown): void }>()
  private nextId = 0
  private wrote = false
  private closing = false
  /** As of the last statement's answer: true while a transaction is open on the connection. */
  inTransaction = false

  /** `pragmas` are set on the connection as it opens, in order (`busy_timeout = 5000`, say). */
  constructor(file: string, pragmas: string[]) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3')
    this.worker = new Worker(CONNECTION_WORKER, { eval: true, workerData: { file, pragmas, driver, cacheSize: STATEMENT_CACHE_SIZE } })
    // An idle connection does not keep the process alive; one with a statement under way does.
    this.worker.unref()
    this.worker.on('message', (answer: Answer) => this.answered(answer))
    this.worker.on('error', (error) => this.failAll(error))
    this.worker.on('exit', (code) => this.failAll(new Error(`the SQLite connection's worker thread exited (code ${code})`)))
  }

  /** A statement's rows, or for one that returns none, the rows it changed and the last row id it inserted. */
  async query(sql: string, parameters: readonly unknown[]): Promise<{ rows: Record<string, unknown>[]; changes?: number; lastInsertRowid?: number | bigint }> {
    const answer = await this.send({ op: 'query', sql, parameters })
    if (answer.blobs) for (const row of answer.rows!) for (const key in row) if (row[key] instanceof Uint8Array) row[key] = Buffer.from(row[key] as Uint8Array)
    return { rows: answer.rows ?? [], changes: answer.changes, lastInsertRowid: answer.lastInsertRowid }
  }

  /** Runs one prepared statement once for each list of parameters: many rows for one message. */
  async runEach(sql: string, parameterLists: unknown[][]): Promise<void> {
    await this.send({ op: 'runEach', sql, parameterLists })
  }

  /** Steps `sql` to its end (`pragma incremental_vacuum(n)` frees one page per step of a prepared statement). */
  async exec(sql: string): Promise<void> {
    await this.send({ op: 'exec', sql })
  }

  /** Rolls back the open transaction, if SQLite has not already. */
  async rollback(): Promise<void> {
    await this.send({ op: 'rollback' })
  }

  /** Whether a writing statement ran since the last call. */
  takeWrites(): boolean {
    const wrote = this.wrote
    this.wrote = false
    return wrote
  }

  async close(): Promise<void> {
    this.closing = true
    this.worker.ref()
    const exited = new Promise((resolve) => this.worker.once('exit', resolve))
    await this.send({ op: 'close' }).catch(() => {})
    await exited
  }

  private send(request: Request): Promise<Answer> {
    const id = this.nextId++
    return new Promise<Answer>((resolve, reject) => {
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
    this.inTransaction = answer.inTransaction
    if (answer.wrote) this.wrote = true
    if (answer.error) waiting.reject(Object.assign(new Error(answer.error.message), { name: answer.error.name, code: answer.error.code }))
    else waiting.resolve(answer)
  }

  private failAll(error: unknown) {
    for (const waiting of this.pending.values()) waiting.reject(error)
    this.pending.clear()
  }
}
