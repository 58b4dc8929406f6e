import { Type } from 'typebox'
import { columnEquals, defineModule } from '../modules/module.ts'
import { ErrorPayload, errorExamples } from './payload.ts'
import { errorMigrations } from './migrations.ts'
import { assigneeMigrations } from './assignees.ts'
import { occurrenceFromEvent } from './capture.ts'
import { GROUPING_ALGORITHM } from './fingerprint.ts'
import { foldAllCounts, OCCURRENCES_KEPT_PER_GROUP, recordOccurrences } from './group-store.ts'
import { errorRoutes } from './routes.ts'
import { errorDb } from './tables.ts'
import { errorSignals } from './signals.ts'
import { unignoreDueGroups } from './unignore.ts'

export const errorsModule = defineModule({
  type: 'error',
  name: 'errors',
  basePath: '/api/errors',
  payload: ErrorPayload,
  examples: errorExamples,
  check: (d) => (d.name === undefined && d.message === undefined ? 'data.name: required when data.message is absent' : undefined),
  table: 'error_events',
  columnar: true,
  migrations: [...errorMigrations, ...assigneeMigrations],
  columns: (d) => ({ name: d.name ?? null, environment: d.environment ?? null, release: d.release ?? null }),
  filters: {
    name: columnEquals('name', Type.String()),
    environment: columnEquals('environment', Type.String()),
    release: columnEquals('release', Type.String()),
  },
  // Ingested `error` events join the same groups as captures, in the ingest transaction.
  afterWrite: async (trx, events, ctx) => {
    await recordOccurrences(trx, ctx, events.map(occurrenceFromEvent))
  },
  status: {
    schema: {
      groupingAlgorithm: Type.String({ description: 'the fingerprint algorithm version new occurrences are grouped with' }),
      occurrencesKeptPerGroup: Type.Integer(),
      groups: Type.Optional(Type.Integer({ description: 'error groups of project_id' })),
      unresolvedGroups: Type.Optional(Type.Integer({ description: 'of which unresolved' })),
    },
    async read(ctx, projectId) {
      const fixed = { groupingAlgorithm: GROUPING_ALGORITHM, occurrencesKeptPerGroup: OCCURRENCES_KEPT_PER_GROUP }
      if (projectId === undefined) return fixed
      const row = await errorDb(ctx.storage.db)
        .selectFrom('error_groups')
        .select((eb) => [eb.fn.countAll<number>().as('groups'), eb.fn.sum<number>(eb.case().when('status', '=', 'unresolved').then(1).else(0).end()).as('unresolved')])
        .where('project_id', '=', projectId)
        .executeTakeFirstOrThrow()
      return { ...fixed, groups: Number(row.groups), unresolvedGroups: Number(row.unresolved ?? 0) }
    },
  },
  // Groups are state and stay; their occurrences expire with the error events.
  retention: {
    expiring: [
      { table: 'error_occurrences', timeColumn: 'ts', key: ['id'] },
      { table: 'error_trimmed_minutes', timeColumn: 'ts', key: ['id'] },
    ],
  },
  signals: errorSignals,
  routes: errorRoutes,
  // Reads fold a project's appended counts first; this keeps them short when nobody reads, and
  // returns ignored groups whose time has come, or whose count was reached, to unresolved.
  start: async (ctx) => {
    let running: Promise<void> | undefined
    const timer = setInterval(() => {
      running ??= foldAllCounts(ctx)
        .then(() => unignoreDueGroups(ctx))
        .catch((error) => ctx.log.warn({ err: error }, 'folding error counts or unignoring groups failed; the next pass retries'))
        .finally(() => (running = undefined))
    }, COUNT_FOLD_INTERVAL_MS)
    timer.unref()
    return async () => {
      clearInterval(timer)
      await running
    }
  },
})

const COUNT_FOLD_INTERVAL_MS = 1000
