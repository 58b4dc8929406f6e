import type { Config } from './config.ts'
import { modules } from './modules/registry.ts'
import type { StorageOptions } from './storage/storage.ts'

/** How the portal opens its storage: from its configuration and what the registry's modules declare. */
export function storageOptions(config: Config): StorageOptions {
  return {
    poolSize: config.databasePoolSize,
    poolWaitMs: config.databasePoolWaitMs,
    queryTimeoutMs: config.databaseQueryTimeoutMs,
    sqliteSynchronous: config.sqliteSynchronous,
    startupWaitMs: config.startupWaitMs,
    eventStore: config.eventStore,
    columnarTables: modules.filter((module) => module.columnar).map((module) => module.table),
    promotedFields: Object.fromEntries(modules.map((module) => [module.table, module.promotedFields ?? []])),
    freeTextColumns: Object.fromEntries(modules.map((module) => [module.table, module.freeTextColumns ?? []])),
  }
}
