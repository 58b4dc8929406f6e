import pg from 'pg'
import { retryUntilReachable, StartupError } from '../../startup.ts'

// Refusals that end when a server starting beside the portal (a container, a restart) is up: retried.
const NOT_UP_YET = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', '57P03'])
const notUpYet = (error: unknown) => NOT_UP_YET.has((error as { code?: string }).code ?? '') || /timeout|terminated unexpectedly/i.test((error as Error).message ?? '')

/**
 * Connects once to the database `url` names, waiting up to `waitMs` for a server that is not up yet (logged
 * through `onRetry`), so that the first query of a start does not fail with a driver's stack trace. A
 * database that does not exist, refused credentials and a server still away after the wait become one
 * StartupError line naming DATABASE_URL.
 */
export async function waitForPostgres(url: string, waitMs: number, onRetry?: (message: string) => void): Promise<void> {
  const target = new URL(url)
  const server = `PostgreSQL at ${target.hostname || 'localhost'}:${target.port || 5432}`
  const database = decodeURIComponent(target.pathname.slice(1)) || decodeURIComponent(target.username) || 'postgres'
  const connectOnce = async () => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 })
    client.on('error', () => {})
    try {
      await client.connect()
    } finally {
      await client.end().catch(() => {})
    }
  }
  try {
    await retryUntilReachable(connectOnce, {
      waitMs,
      retryable: notUpYet,
      onRetry: (error, retryInMs) => onRetry?.(`${server} is not reachable yet (${reason(error)}); trying again in ${(retryInMs / 1000).toFixed(1)} s, for up to ${waitMs / 1000} s in all (STARTUP_WAIT_SECONDS)`),
    })
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === '3D000') throw new StartupError(`DATABASE_URL: ${server} has no database "${database}"; create it first (createdb -h ${target.hostname} -p ${target.port || 5432} -U ${decodeURIComponent(target.username) || 'postgres'} ${database}) or name an existing one`)
    if (code === '28P01' || code === '28000') throw new StartupError(`DATABASE_URL: ${server} refused the login (${reason(error)}); fix the user or password in DATABASE_URL`)
    if (notUpYet(error)) throw new StartupError(`DATABASE_URL: ${server} cannot be reached (${reason(error)})${waitMs ? ` after ${waitMs / 1000} s` : ''}; start it or fix the host and port (STARTUP_WAIT_SECONDS sets how long a start waits)`)
    throw error
  }
}

function reason(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string }
  return code && /^[A-Z]+$/.test(code) ? code : (message ?? String(error))
}
