import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'

export const performanceMigrations: Migration[] = [
  {
    name: 'performance/001_performance_events',
    up: (db, t) =>
      createEventTableV1(db, t, 'performance_events', [['service', 'text'], ['metric', 'text'], ['value', 'double'], ['unit', 'text']], [['service', 'metric'], ['metric']]),
  },
  {
    // Covers the summary: each series' values already in order, so percentiles need no sort or table reads.
    name: 'performance/002_stats_index',
    up: (db) =>
      db.schema.createIndex('performance_events_stats_idx').ifNotExists().on('performance_events').columns(['project_id', 'service', 'metric', 'unit', 'value', 'ts']).execute(),
  },
  {
    // Covers a time window's values (the UI's summary is of the last day): the stats index above leads with
    // the series, so a window read every value the project ever stored to find the day's.
    name: 'performance/003_window_values_index',
    up: (db) =>
      db.schema.createIndex('performance_events_window_values_idx').ifNotExists().on('performance_events').columns(['project_id', 'ts', 'service', 'metric', 'unit', 'value']).execute(),
  },
]
