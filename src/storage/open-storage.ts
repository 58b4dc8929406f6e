// Opening is kept apart from storage.ts: the sqlite/, postgres/ and duckdb/ implementations it loads import storage.ts's interfaces.
import { StoreUnavailableError, type Storage, type StorageOptions } from './storage.ts'
import { withPromotedFields } from './promoted-fields.ts'

export async function openStorage(databaseUrl: string, options: StorageOptions): Promise<Storage> {
  return withPromotedFields(await openDatabase(databaseUrl, options), options.promotedFields ?? {})
}

async function openDatabase(databaseUrl: string, options: StorageOptions): Promise<Storage> {
  if (databaseUrl.startsWith('sqlite:')) {
    const { openSqliteStorage } = await import('./sqlite/sqlite-storage.ts')
    const file = databaseUrl.slice('sqlite:'.length)
    const storage = openSqliteStorage(file, options.sqliteSynchronous, undefined, options.poolWaitMs, options.writerThread)
    // A writer thread takes the tables its event loop's storage chose: the one that can see inside events.duckdb.
    const columnarTables = options.writerThread?.columnarTables ?? options.columnarTables ?? []
    if (file === ':memory:' || !columnarTables.length || options.eventStore === 'sqlite') return storage
    const { withDuckdbEvents, withDuckdbOutbox } = await import('./duckdb/duckdb-events.ts')
    if (options.writerThread) return withDuckdbOutbox(storage, columnarTables)
    return withDuckdbEvents(storage, file, columnarTables, options.eventStore === 'duckdb', options.freeTextColumns ?? {}).catch(async (error: unknown) => {
      await storage.close()
      throw error
    })
  }
  const [{ openPostgresStorage }, { waitForPostgres }] = await Promise.all([import('./postgres/postgres-storage.ts'), import('./postgres/postgres-reachable.ts')])
  await waitForPostgres(databaseUrl, options.startupWaitMs ?? 0, options.onStartupWait)
  return openPostgresStorage(databaseUrl, options)
}

/**
 * Whether `error`, thrown while the database at `databaseUrl` was being opened and migrated, is an outage to wait out
 * (a full disk where SQLite cannot make its shared-memory file; PostgreSQL down) rather than a configuration error or a bug.
 */
export async function isUnavailableAtOpen(databaseUrl: string, error: unknown): Promise<boolean> {
  if (error instanceof StoreUnavailableError) return true
  if (databaseUrl.startsWith('sqlite:')) return (await import('./sqlite/sqlite-storage.ts')).isSqliteUnavailable(error)
  return (await import('./postgres/postgres-storage.ts')).isPostgresUnavailable(error)
}
