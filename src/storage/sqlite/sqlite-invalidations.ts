import type { InvalidationChannel } from '../storage.ts'

type Listener = (topic: string | null) => void

/** Subscribers by database file: the storages of one file opened in this process hear each other. */
const listenersByFile = new Map<string, Set<Listener>>()

/**
 * One SQLite file has one portal process, so its messages reach that process's own subscribers, among
 * them those of other storages of the same file (the tests open several). A message published inside a
 * transaction is delivered at once: the process's lookups wait for the one connection the transaction
 * holds, so none reads the old state after the message.
 */
export function sqliteInvalidations(file: string): InvalidationChannel {
  const own = new Set<Listener>()
  let listeners = file === ':memory:' ? new Set<Listener>() : listenersByFile.get(file)
  if (!listeners) listenersByFile.set(file, (listeners = new Set()))
  const shared = listeners
  return {
    async publish(topic) {
      for (const listener of shared) listener(topic)
    },
    subscribe(listener) {
      own.add(listener)
      shared.add(listener)
      return () => {
        own.delete(listener)
        shared.delete(listener)
      }
    },
    async close() {
      for (const listener of own) shared.delete(listener)
      own.clear()
      if (shared.size === 0) listenersByFile.delete(file)
    },
  }
}
