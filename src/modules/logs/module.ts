import { Type } from 'typebox'
import { columnEquals, defineModule } from '../module.ts'
import { LogPayload, logExamples } from './payload.ts'
import { logMigrations } from './migrations.ts'
import { logReads } from './reads.ts'
import { countLevelsAtIngest } from './level-counts.ts'
import { logSignals } from './signals.ts'

export const logsModule = defineModule({
  type: 'log',
  name: 'logs',
  basePath: '/api/modules/logs',
  payload: LogPayload,
  examples: logExamples,
  table: 'log_events',
  columnar: true,
  migrations: logMigrations,
  columns: (d) => ({ level: d.level ?? null, module: d.module ?? null, message: d.message }),
  promotedFields: ['level', 'module', 'message'],
  freeTextColumns: ['message'],
  filters: {
    level: columnEquals('level', Type.String()),
    module: columnEquals('module', Type.String()),
    trace_id: {
      schema: Type.String({ minLength: 1, description: 'logs of this trace: their `traceId` (OpenTelemetry and Sentry logs carry it); narrow with `from`/`to` around the trace' }),
      scans: true,
      apply: (query, value: string, storage) => query.where(storage.jsonPathText('data', ['traceId']), '=', value),
    },
    service: {
      schema: Type.String({ minLength: 1, description: 'logs of this service: their `serviceName` (set from the OpenTelemetry resource’s `service.name`) or their `fields.service.name`' }),
      scans: true,
      apply: (query, value: string, storage) => query.where((eb) => eb.or([eb(storage.jsonPathText('data', ['serviceName']), '=', value), eb(storage.jsonPathText('data', ['fields', 'service.name']), '=', value)])),
    },
    q: {
      schema: Type.String({ minLength: 1, description: 'case-insensitive text within the message' }),
      scans: true,
      apply: (query, value: string, storage) => query.where(storage.containsText('message', value)),
    },
  },
  patternFilters: [
    {
      pattern: '^field\\.([A-Za-z0-9_.-]+)$',
      schema: Type.String({ description: '`field.<name>=value`: logs whose `fields.<name>` equals value (numbers and booleans as text)' }),
      apply: (query, name, value: string, storage) => query.where(storage.jsonPathText('data', ['fields', name]), '=', value),
    },
  ],
  // Counts per level and hour, for counts over long ranges, and per minute, for alert rules.
  afterWrite: (trx, events, ctx) => countLevelsAtIngest(trx, ctx.storage, events),
  // The counts describe events that are gone once their hour or minute has expired.
  retention: {
    expiring: [
      { table: 'log_level_hours', timeColumn: 'hour', key: ['project_id', 'hour', 'level_key'] },
      { table: 'log_level_minutes', timeColumn: 'ts', key: ['project_id', 'ts', 'level_key', 'shard'] },
    ],
  },
  signals: logSignals,
  routes: logReads,
})
