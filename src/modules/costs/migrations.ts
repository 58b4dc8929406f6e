import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'

export const costMigrations: Migration[] = [
  {
    name: 'costs/001_cost_events',
    up: (db, t) =>
      createEventTableV1(
        db,
        t,
        'cost_events',
        [['provider', 'text'], ['service', 'text'], ['region', 'text'], ['amount', 'double'], ['currency', 'text'], ['period', 'text']],
        [['period'], ['service']],
      ),
  },
  {
    // Events without `period` count in the UTC month of their time; totals group and index on the column.
    name: 'costs/002_period_from_time_and_totals_index',
    up: async (db) => {
      const undated = await db.selectFrom('cost_events').select(['id', 'ts']).where('period', 'is', null).execute()
      for (const row of undated) {
        await db.updateTable('cost_events').set({ period: new Date(Number(row.ts)).toISOString().slice(0, 7) }).where('id', '=', row.id).execute()
      }
      await db.schema
        .createIndex('cost_events_totals_idx')
        .ifNotExists()
        .on('cost_events')
        .columns(['project_id', 'period', 'currency', 'service', 'provider', 'region', 'amount'])
        .execute()
    },
  },
]
