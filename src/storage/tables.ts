import type { Kysely, QueryExecutorProvider } from 'kysely'

/** A connection or transaction of the portal's database, whatever tables its holder has typed it with. */
export type Connection = QueryExecutorProvider

/** `connection` typed with the portal's own tables and `T` (a module's, in its `tables.ts`): they all live in the one database. */
export function tablesOf<T = unknown>(connection: Connection): Kysely<Database & T> {
  return connection as Kysely<Database & T>
}

/** Row types of the portal's own tables. Module tables are typed in their modules. */
export interface Database {
  organizations: { id: string; name: string; created_at: number }
  access_tokens: {
    id: string
    org_id: string
    name: string
    role: 'admin' | 'viewer'
    token_hash: string
    prefix: string
    created_at: number
    last_used_at: number | null
    revoked_at: number | null
  }
  projects: {
    id: string
    org_id: string
    name: string
    created_at: number
    updated_at: number
    deleted_at: number | null
    /** lowered by a `tenant` event; null means the install's limit */
    ingest_events_per_second: number | null
    /** the stable number Sentry's DSN names the project by; null only before it is given one */
    number: number | null
  }
  api_keys: {
    id: string
    project_id: string
    name: string
    key_hash: string
    prefix: string
    webhook_secret_encrypted: string
    /** space-separated KeyScope values */
    scopes: string
    created_at: number
    last_used_at: number | null
    revoked_at: number | null
  }
  idempotency_keys: {
    project_id: string
    key: string
    request_hash: string
    status_code: number
    response_body: string
    created_at: number
  }
  /** a project's retention overrides: `event_type` is a module's type, or `*` for every type */
  project_retention: { project_id: string; event_type: string; days: number; updated_at: number }
  portal_migrations: { name: string; applied_at: number }
  /** PostgreSQL: one row per name locked by Storage.lockInTransaction */
  transaction_locks: { name: string }
  /** one row, rewritten by each health check to prove that the database takes writes */
  health_probe: { id: number; checked_at: number }
}
