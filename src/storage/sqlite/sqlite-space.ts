import { setImmediate as yieldToIngest } from 'node:timers/promises'
import { Worker } from 'node:worker_threads'
import type SQLite from './better-sqlite3.ts'
import { betterSqlite3Path } from './better-sqlite3.ts'
import { sql, type Kysely } from 'kysely'
import type { SpaceManagement } from '../storage.ts'
import type { Database } from '../tables.ts'

/** Pages one `incremental_vacuum` step gives back: 4 MiB, a few milliseconds of the writer's time. */
const VACUUM_STEP_PAGES = 1024
/** Sizes older than this are measured again; until the new figures arrive, status shows these. */
const SIZES_FRESH_MS = 60_000

// dbstat walks every page of the file: at millions of events that takes seconds, so it runs on its own
// read-only connection in a worker thread (WAL lets it read beside the writer) and never on the event loop.
// Plain JavaScript, evaluated, so the worker needs no TypeScript loader whichever way the portal was started.
const SIZE_WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const SQLite = require(workerData.driver)
const database = new SQLite(workerData.file, { readonly: true, fileMustExist: true })
const sizes = database.prepare("select s.tbl_name as tableName, sum(d.pgsize) as bytes from dbstat('main', 1) d join sqlite_schema s on s.name = d.name group by s.tbl_name")
parentPort.on('message', () => {
  try {
    parentPort.postMessage({ rows: sizes.all() })
  } catch (error) {
    parentPort.postMessage({ error: String(error) })
  }
})
`

/**
 * SQLite: no partitions; a new database is created with auto_vacuum=incremental, so pages freed by the
 * retention job's deletes go back to the file system a step at a time. A database made before that
 * reuses its freed pages for new rows (its file stops growing) until a one-off `VACUUM` converts it.
 */
export function sqliteSpace(db: Kysely<Database>, database: SQLite.Database, file: string): SpaceManagement {
  let worker: Worker | undefined
  let sizes: { at: number; bytes: Map<string, number> } | undefined
  let measuring: Promise<Map<string, number>> | undefined

  function measure(): Promise<Map<string, number>> {
    measuring ??= new Promise<Map<string, number>>((resolve, reject) => {
      worker ??= new Worker(SIZE_WORKER, { eval: true, workerData: { file, driver: betterSqlite3Path } })
      worker.unref()
      worker.once('message', (answer: { rows?: { tableName: string; bytes: number }[]; error?: string }) => {
        if (answer.error !== undefined) return reject(new Error(answer.error))
        const bytes = new Map(answer.rows!.map((row) => [row.tableName, Number(row.bytes)]))
        sizes = { at: Date.now(), bytes }
        resolve(bytes)
      })
      worker.postMessage('measure')
    }).finally(() => (measuring = undefined))
    return measuring
  }

  return {
    createPartitions: async () => [],
    dropPartitionsBefore: async () => [],
    async returnFreeSpace(stop) {
      const mode = await sql<{ auto_vacuum: number }>`pragma auto_vacuum`.execute(db)
      if (Number(mode.rows[0]?.auto_vacuum) !== 2) return 0
      const pageSize = Number((await sql<{ page_size: number }>`pragma page_size`.execute(db)).rows[0].page_size)
      const freePages = async () => Number((await sql<{ freelist_count: number }>`pragma freelist_count`.execute(db)).rows[0].freelist_count)
      const before = await freePages()
      let free = before
      while (free > 0 && !stop()) {
        // A prepared statement's run() frees one page per call; exec steps the pragma to its end. A transaction
        // of its own holds the writing connection, so no other caller's transaction is open on it meanwhile.
        await db.transaction().execute(async () => database.exec(`pragma incremental_vacuum(${VACUUM_STEP_PAGES})`))
        const left = await freePages()
        if (left >= free) break
        free = left
        await yieldToIngest()
      }
      return (before - free) * pageSize
    },
    async tableSizes(tables) {
      const known = sizes && Date.now() - sizes.at < SIZES_FRESH_MS ? sizes.bytes : undefined
      let bytes = known ?? sizes?.bytes
      if (!known) {
        const fresh = measure()
        // Stale figures answer at once while new ones are measured; the first request waits for them.
        if (bytes) fresh.catch(() => {})
        else bytes = await fresh
      }
      return Object.fromEntries(tables.map((table) => [table, bytes!.get(table) ?? 0]))
    },
    async close() {
      await worker?.terminate()
    },
  }
}
