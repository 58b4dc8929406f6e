import type { Kysely } from 'kysely'
import type { ColumnTypes, Storage } from './storage.ts'

/**
 * A schema change, frozen in time: it takes `Kysely<any>` and never imports the app's current code,
 * so that an old database can always be brought forward step by step.
 */
export interface Migration {
  name: string
  up(db: MigrationDb, types: ColumnTypes): Promise<void>
}

/** What a migration and the frozen helpers it calls write through. */
// any: untyped on purpose, since today's row types are not the ones the migration saw
export type MigrationDb = Kysely<any>

export const coreMigrations: Migration[] = [
  {
    name: 'core/001_identity_projects_keys',
    async up(db, t) {
      await db.schema
        .createTable('organizations')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', t.bigint, (c) => c.notNull())
        .execute()
      await db.schema
        .createTable('access_tokens')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('created_at', t.bigint, (c) => c.notNull())
        .addColumn('last_used_at', t.bigint)
        .addColumn('revoked_at', t.bigint)
        .execute()
      await db.schema
        .createTable('projects')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', t.bigint, (c) => c.notNull())
        .addColumn('updated_at', t.bigint, (c) => c.notNull())
        .addColumn('deleted_at', t.bigint)
        .addColumn('ingest_events_per_second', t.bigint)
        .execute()
      await db.schema.createIndex('projects_org_idx').ifNotExists().on('projects').columns(['org_id', 'created_at']).execute()
      await db.schema
        .createTable('api_keys')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('webhook_secret_encrypted', 'text', (c) => c.notNull())
        .addColumn('created_at', t.bigint, (c) => c.notNull())
        .addColumn('last_used_at', t.bigint)
        .addColumn('revoked_at', t.bigint)
        .execute()
      await db.schema.createIndex('api_keys_project_idx').ifNotExists().on('api_keys').columns(['project_id', 'created_at']).execute()
      await db.schema
        .createTable('idempotency_keys')
        .ifNotExists()
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('status_code', 'integer', (c) => c.notNull())
        .addColumn('response_body', 'text', (c) => c.notNull())
        .addColumn('created_at', t.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['project_id', 'key'])
        .execute()
      await db.schema.createIndex('idempotency_keys_created_idx').ifNotExists().on('idempotency_keys').column('created_at').execute()
    },
  },
  {
    name: 'core/002_default_organization',
    async up(db) {
      await db.insertInto('organizations').values({ id: 'org_default', name: 'Default organisation', created_at: Date.now() }).execute()
    },
  },
  {
    name: 'core/003_health_probe',
    async up(db, t) {
      await db.schema
        .createTable('health_probe')
        .ifNotExists()
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('checked_at', t.bigint, (c) => c.notNull())
        .execute()
    },
  },
  {
    name: 'core/004_api_key_scopes',
    async up(db) {
      const columns = await tableColumns(db, 'api_keys')
      if (columns.includes('scopes')) return
      // Keys made before scopes existed keep what they could do: the signed ingest.
      await db.schema.alterTable('api_keys').addColumn('scopes', 'text', (c) => c.notNull().defaultTo('ingest')).execute()
    },
  },
  {
    name: 'core/005_project_numbers',
    async up(db, t) {
      // Sentry's DSN grammar needs a numeric project id; a project keeps its number for good.
      if (!(await tableColumns(db, 'projects')).includes('number')) {
        await db.schema.alterTable('projects').addColumn('number', t.bigint).execute()
      }
      const unnumbered = await db.selectFrom('projects').select('id').where('number', 'is', null).orderBy('created_at').orderBy('id').execute()
      const { highest } = await db.selectFrom('projects').select((eb) => eb.fn.max('number').as('highest')).executeTakeFirstOrThrow()
      let next = Number(highest ?? 0)
      for (const row of unnumbered) await db.updateTable('projects').set({ number: ++next }).where('id', '=', row.id).execute()
      await db.schema.createIndex('projects_number_idx').ifNotExists().unique().on('projects').column('number').execute()
    },
  },
  {
    // A project's own retention (docs/retention.md): one row per event type it overrides, `*` for every type.
    name: 'core/006_project_retention',
    async up(db, t) {
      await db.schema
        .createTable('project_retention')
        .ifNotExists()
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('days', 'integer', (c) => c.notNull())
        .addColumn('updated_at', t.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('project_retention_pk', ['project_id', 'event_type'])
        .execute()
    },
  },
  {
    // One row per lock name for Storage.lockInTransaction on PostgreSQL, whose row locks never confuse
    // two names the way hashed advisory locks can; SQLite, with its one writer, never reads it.
    name: 'core/007_transaction_locks',
    async up(db) {
      await db.schema.createTable('transaction_locks').ifNotExists().addColumn('name', 'text', (c) => c.primaryKey()).execute()
    },
  },
]

async function tableColumns(db: MigrationDb, table: string): Promise<string[]> {
  const tables = await db.introspection.getTables()
  return tables.find((found) => found.name === table)?.columns.map((column) => column.name) ?? []
}

/**
 * Applies, in order, every migration not yet recorded, under a lock so that concurrent starts take turns.
 * Not Kysely's Migrator, though it is as fast (49 migrations on a new SQLite file in 308–622 ms against
 * 338–715 ms here, `npm run bench -- libraries` (bench/libraries.ts), 2026-11-27, the shared 2-core development machine under load (two runs)): on SQLite it runs migrations outside any transaction (its adapter declares DDL
 * non-transactional), where each of ours commits with its record, so a crash never leaves one half applied and
 * unrecorded; it orders by name, not by the registry's list; and installs record theirs in portal_migrations.
 */
export async function migrate(storage: Storage, migrations: Migration[]): Promise<string[]> {
  const db = storage.db as unknown as MigrationDb
  return storage.withExclusiveLock('portal_migrations', async () => {
    await db.schema
      .createTable('portal_migrations')
      .ifNotExists()
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('applied_at', storage.types.bigint, (c) => c.notNull())
      .execute()
    const done = new Set((await db.selectFrom('portal_migrations').select('name').execute()).map((row) => row.name as string))
    const applied: string[] = []
    for (const migration of migrations) {
      if (done.has(migration.name)) continue
      await db.transaction().execute(async (trx) => {
        await migration.up(trx, storage.types)
        await trx.insertInto('portal_migrations').values({ name: migration.name, applied_at: Date.now() }).execute()
      })
      applied.push(migration.name)
    }
    return applied
  })
}

