import { Type } from 'typebox'
import { columnEquals, defineModule } from '../module.ts'
import { checkSession, SessionPayload, sessionExamples } from './payload.ts'
import { sessionMigrations } from './migrations.ts'
import { recordSessions } from './health.ts'
import { sessionReads } from './reads.ts'
import { sessionSignals } from './signals.ts'

/** Release health: sessions from Sentry SDKs (or ingest) become crash-free rates per release and environment. */
export const sessionsModule = defineModule({
  type: 'session',
  name: 'sessions',
  basePath: '/api/modules/sessions',
  payload: SessionPayload,
  examples: sessionExamples,
  check: checkSession,
  table: 'session_events',
  columnar: true,
  migrations: sessionMigrations,
  columns: (d) => ({ release: d.release, environment: d.environment ?? null }),
  filters: {
    release: columnEquals('release', Type.String()),
    environment: columnEquals('environment', Type.String()),
  },
  // The summaries release health reads, in the ingest transaction.
  afterWrite: (trx, events, ctx) => recordSessions(trx, ctx, events),
  retention: {
    expiring: [
      { table: 'session_states', timeColumn: 'started', key: ['project_id', 'session_id'] },
      { table: 'session_aggregates', timeColumn: 'started', key: ['project_id', 'started', 'release', 'environment', 'distinct_id'] },
    ],
  },
  routes: sessionReads,
  signals: sessionSignals,
})
