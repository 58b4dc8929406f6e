import { sql } from 'kysely'
import type { Migration } from '../storage/migrations.ts'
import { createEventTableV1 } from '../storage/frozen/event-table-v1.ts'

export const webhookEventMigrations: Migration[] = [
  {
    name: 'webhooks/001_webhook_events',
    up: (db, t) =>
      createEventTableV1(db, t, 'webhook_events', [['destination', 'text'], ['url', 'text'], ['status_code', 'integer']], [['destination']]),
  },
  {
    name: 'webhooks/002_endpoints_and_delivery_queue',
    async up(db, t) {
      await db.schema
        .createTable('webhook_endpoints')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('event_types', t.json, (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('disabled_reason', 'text')
        .addColumn('disabled_at', t.bigint)
        .addColumn('failing_since', t.bigint)
        .addColumn('created_at', t.bigint, (c) => c.notNull())
        .addColumn('updated_at', t.bigint, (c) => c.notNull())
        .addColumn('deleted_at', t.bigint)
        .execute()
      await db.schema.createIndex('webhook_endpoints_project_idx').ifNotExists().on('webhook_endpoints').columns(['project_id', 'created_at desc', 'id desc']).execute()
      await db.schema
        .createTable('webhook_endpoint_secrets')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('endpoint_id', 'text', (c) => c.notNull())
        .addColumn('secret_encrypted', 'text', (c) => c.notNull())
        .addColumn('created_at', t.bigint, (c) => c.notNull())
        .addColumn('expires_at', t.bigint)
        .execute()
      await db.schema.createIndex('webhook_endpoint_secrets_endpoint_idx').ifNotExists().on('webhook_endpoint_secrets').columns(['endpoint_id', 'created_at']).execute()
      await db.schema
        .createTable('webhook_messages')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('payload', t.json, (c) => c.notNull())
        .addColumn('created_at', t.bigint, (c) => c.notNull())
        .execute()
      await db.schema
        .createTable('webhook_deliveries')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('endpoint_id', 'text', (c) => c.notNull())
        .addColumn('message_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempt_count', 'integer', (c) => c.notNull())
        .addColumn('final_attempt', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', t.bigint)
        .addColumn('lease', 'text')
        .addColumn('leased_until', t.bigint)
        .addColumn('created_at', t.bigint, (c) => c.notNull())
        .addColumn('updated_at', t.bigint, (c) => c.notNull())
        .execute()
      await db.schema.createIndex('webhook_deliveries_project_idx').ifNotExists().on('webhook_deliveries').columns(['project_id', 'created_at desc', 'id desc']).execute()
      await db.schema.createIndex('webhook_deliveries_endpoint_idx').ifNotExists().on('webhook_deliveries').columns(['endpoint_id', 'created_at desc', 'id desc']).execute()
      await db.schema.createIndex('webhook_deliveries_due_idx').ifNotExists().on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute()
      await db.schema
        .createTable('webhook_attempts')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('delivery_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('endpoint_id', 'text', (c) => c.notNull())
        .addColumn('number', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('started_at', t.bigint, (c) => c.notNull())
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('request', t.json, (c) => c.notNull())
        .addColumn('response', t.json)
        .addColumn('error', 'text')
        .addColumn('secret_id', 'text')
        .execute()
      // One row per attempt number: a second instance that lost its lease cannot record the same attempt again.
      await db.schema.createIndex('webhook_attempts_delivery_number_idx').ifNotExists().unique().on('webhook_attempts').columns(['delivery_id', 'number']).execute()
      await db.schema.createIndex('webhook_attempts_project_started_idx').ifNotExists().on('webhook_attempts').columns(['project_id', 'started_at']).execute()
      await db.schema.createIndex('webhook_attempts_started_idx').ifNotExists().on('webhook_attempts').columns(['started_at']).execute()
    },
  },
  {
    // Covers the reported-attempts summary: grouped in index order, counted without reading the table.
    name: 'webhooks/003_reported_attempts_index',
    up: (db) =>
      db.schema
        .createIndex('webhook_events_reported_attempts_idx')
        .ifNotExists()
        .on('webhook_events')
        .columns(['project_id', 'destination', 'url', 'status_code', 'ts'])
        .execute(),
  },
  {
    // The retention job finds a project's expired messages by time, and whether a delivery still holds each.
    name: 'webhooks/004_expiry_indexes',
    async up(db) {
      await db.schema.createIndex('webhook_messages_project_created_idx').ifNotExists().on('webhook_messages').columns(['project_id', 'created_at']).execute()
      await db.schema.createIndex('webhook_deliveries_message_idx').ifNotExists().on('webhook_deliveries').column('message_id').execute()
    },
  },
  {
    // Claims count every instance's live leases per endpoint; only leased deliveries are in this index.
    name: 'webhooks/005_delivery_leases_index',
    up: (db) =>
      db.schema
        .createIndex('webhook_deliveries_leased_idx')
        .ifNotExists()
        .on('webhook_deliveries')
        .columns(['leased_until', 'endpoint_id'])
        .where(sql.ref('leased_until'), 'is not', null)
        .execute(),
  },
]
