/**
 * What a DuckDB error means for the event store: `invalidated` when DuckDB has given up on its database handle
 * (a FATAL error, such as a checkpoint that failed on a full disk after a durable commit: every later query
 * fails with "database has been invalidated" until the database is opened again); `outage` when the file system
 * refused a read or a write (no space, read-only, quota, I/O error) and a later try can succeed; undefined for
 * anything else, which is a bug. The event store's one classification of DuckDB's errors.
 */
export function duckdbFailure(error: unknown): 'invalidated' | 'outage' | undefined {
  const message = messageOf(error)
  if (/^FATAL Error\b|database has been invalidated/i.test(message)) return 'invalidated'
  if (/^IO Error\b/.test(message) || FILE_SYSTEM_REFUSAL.test(message)) return 'outage'
  return undefined
}

/** The file system's refusals, as strerror spells them inside DuckDB's messages ("Could not write file …: No space left on device"). */
const FILE_SYSTEM_REFUSAL = /No space left on device|Read-only file system|Disk quota exceeded|File too large|Input\/output error/i

/** DuckDB refusing a query more memory than its `memory_limit` leaves. */
export function isOutOfMemory(error: unknown): boolean {
  return /^Out of Memory Error\b/.test(messageOf(error))
}

/** DuckDB refusing a second opener of its file: a configuration error at start, never an outage to wait out. */
export function isLockConflict(error: unknown): boolean {
  return /Could not set lock on file/i.test(messageOf(error))
}

/** The cause in a few words an operator can act on, without the file's path. */
export function describeDuckdbFailure(error: unknown): string {
  const message = messageOf(error)
  const refusal = FILE_SYSTEM_REFUSAL.exec(message)?.[0].toLowerCase()
  if (duckdbFailure(error) === 'invalidated') return `DuckDB invalidated its database after a failed write${refusal ? ` (${refusal})` : ''}; reopening it`
  if (refusal) return refusal
  return message.replace(/"[^"]*"/g, '<file>').slice(0, 160)
}

function messageOf(error: unknown): string {
  return String((error as Error | undefined)?.message ?? error)
}
