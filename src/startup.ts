import fs from 'node:fs'
import path from 'node:path'

/**
 * A reason the portal cannot start that the operator can fix: one line that names the variable or path and
 * says what to do. `portal` prints it alone (no stack) and exits with code 2, as for a bad value (ConfigError).
 */
export class StartupError extends Error {}

// A full disk is not among them: it is an outage the portal starts through and recovers from (startPortalThroughOutage).
const FILE_SYSTEM_REASONS: Record<string, string> = {
  ENOTDIR: 'a part of the path is a file, not a folder',
  EEXIST: 'a file stands where the folder should be',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  ENOENT: 'a part of the path does not exist',
  // better-sqlite3's codes for a file it cannot open or write
  SQLITE_CANTOPEN: 'the file cannot be opened',
  SQLITE_READONLY: 'the file is read-only',
}

/** `error` as a StartupError about `target` (a folder or file that `variable` names), when the file system refused it; else unchanged. */
export function fileSystemStartupError(error: unknown, variable: string, target: string): unknown {
  const code = (error as { code?: string }).code
  const reason = code && FILE_SYSTEM_REASONS[code]
  if (!reason) return error
  return new StartupError(`${variable}: ${target} cannot be written (${code}: ${reason}); point ${variable} at a folder this user can write, or fix its permissions`)
}

/** Creates `dir` if needed and proves it writable with a file written, fsynced and removed; a StartupError naming `variable` otherwise. */
export function requireWritableFolder(dir: string, variable: string): void {
  const probe = path.join(dir, `.write-check-${process.pid}`)
  try {
    fs.mkdirSync(dir, { recursive: true })
    const fd = fs.openSync(probe, 'w')
    try {
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    fs.rmSync(probe, { force: true })
  } catch (error) {
    throw fileSystemStartupError(error, variable, dir)
  }
}

/** A failed `listen` as a StartupError naming PORT or HOST; else unchanged. */
export function listenStartupError(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'EADDRINUSE') return new StartupError(`PORT: ${host}:${port} is already in use by another process; stop it, or set PORT to a free port`)
  if (code === 'EACCES') return new StartupError(`PORT: listening on ${host}:${port} is not permitted for this user; set PORT to 1024 or above`)
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new StartupError(`HOST: ${host} is not an address of this machine; set HOST to one (0.0.0.0: all of them)`)
  return error
}

/** The wait for a service that is not up yet: `attempt` until it stops throwing a `retryable` error, or `waitMs` has passed. */
export async function retryUntilReachable<T>(
  attempt: () => Promise<T>,
  { waitMs, retryable, onRetry }: { waitMs: number; retryable: (error: unknown) => boolean; onRetry?: (error: unknown, retryInMs: number) => void },
): Promise<T> {
  const deadline = Date.now() + waitMs
  for (let delayMs = 250; ; delayMs = Math.min(delayMs * 2, 5_000)) {
    try {
      return await attempt()
    } catch (error) {
      const retryInMs = Math.min(delayMs, deadline - Date.now())
      if (!retryable(error) || retryInMs <= 0) throw error
      onRetry?.(error, retryInMs)
      await new Promise((resolve) => setTimeout(resolve, retryInMs))
    }
  }
}
