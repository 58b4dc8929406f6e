import fs from 'node:fs/promises'

export interface WalSync {
  /** Resolves once everything written to the WAL before this call is on disk. */
  sync(): Promise<void>
  close(): Promise<void>
}

/**
 * Makes a SQLite WAL durable off the event loop. With `synchronous = FULL` SQLite fsyncs the WAL inside
 * COMMIT, and the portal's one thread waits (0.2–1 ms a commit on the machines measured) while it could
 * be reading the next requests. With `synchronous = NORMAL` COMMIT only writes the WAL; calling `sync()`
 * after it and answering once it resolves keeps FULL's promise (an acknowledged write survives power
 * loss: recovery replays every WAL frame up to the last synced commit) with the fsync on libuv's pool.
 *
 * Calls arriving while an fsync runs share the next one: that one may have started before their
 * commit was written, so it cannot answer for them.
 */
export function walSync(walFile: string, datasync: (handle: fs.FileHandle) => Promise<void> = (handle) => handle.datasync()): WalSync {
  let handle: Promise<fs.FileHandle> | null = null
  let running: Promise<void> | null = null
  let next: Promise<void> | null = null

  async function syncOnce() {
    // Opened on first use: the WAL exists once something has been committed. SQLite keeps it (and so
    // its inode) for as long as the portal's connection is open, truncating it at most.
    handle ??= fs.open(walFile, 'r+')
    try {
      await datasync(await handle)
    } catch (error) {
      handle = null
      throw error
    }
  }

  function start() {
    running = syncOnce().finally(() => (running = null))
    return running
  }

  return {
    sync() {
      if (next) return next
      if (!running) return start()
      next = running
        .catch(() => {})
        .then(() => {
          next = null
          return start()
        })
      return next
    },
    async close() {
      await Promise.allSettled([running, next])
      const opened = await handle?.catch(() => null)
      handle = null
      await opened?.close()
    },
  }
}
