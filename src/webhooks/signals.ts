import { sql } from 'kysely'
import type { AlertSignal, SeriesValue, SignalQuery } from '../alerts/signal.ts'
import type { PortalContext } from '../context.ts'
import { webhookDb } from './tables.ts'

const FILTERS = { endpoint: 'one endpoint (whe_…); without it, every endpoint of the project' }
const DIMENSIONS = { endpoint: 'the endpoint (whe_…)' }

/** Attempts that ended without a 2xx, as a percentage of the attempts made in the window, per endpoint or over all. */
async function failureRate(ctx: PortalContext, query: SignalQuery): Promise<SeriesValue[]> {
  let attempts = webhookDb(ctx.storage)
    .selectFrom('webhook_attempts')
    .where('project_id', '=', query.projectId)
    .where('started_at', '>=', query.fromMs)
    .where('started_at', '<', query.toMs)
    .where('status', 'not in', ['in_progress'])
  if (query.filters.endpoint !== undefined) attempts = attempts.where('endpoint_id', '=', query.filters.endpoint)
  const series = query.by === undefined ? sql.lit('') : sql.ref('endpoint_id')
  const found = await attempts
    .select((eb) => [eb.cast(series, 'text').as('series'), eb.fn.countAll().as('attempts'), sql<number>`sum(case when status = 'succeeded' then 0 else 1 end)`.as('failed')])
    .groupBy('series')
    .execute()
  return found.map((row) => ({ series: String(row.series), value: (100 * Number(row.failed ?? 0)) / Number(row.attempts) }))
}

/** How long the oldest delivery still pending has waited, in seconds, at the window's end; 0 when none waits. */
async function oldestPending(ctx: PortalContext, query: SignalQuery): Promise<SeriesValue[]> {
  let pending = webhookDb(ctx.storage).selectFrom('webhook_deliveries').where('project_id', '=', query.projectId).where('status', '=', 'pending')
  if (query.filters.endpoint !== undefined) pending = pending.where('endpoint_id', '=', query.filters.endpoint)
  const series = query.by === undefined ? sql.lit('') : sql.ref('endpoint_id')
  const found = await pending.select((eb) => [eb.cast(series, 'text').as('series'), eb.fn.min('created_at').as('oldest')]).groupBy('series').execute()
  return found.map((row) => ({ series: String(row.series), value: Math.max(0, (query.toMs - Number(row.oldest)) / 1000) }))
}

const LAST_ATTEMPTS = 5

export const webhookSignals: AlertSignal[] = [
  {
    name: 'webhooks.failure_rate',
    description: 'Delivery attempts of the window that failed (no 2xx, a timeout, a network error), as a percentage',
    unit: '%',
    aggregates: ['rate'],
    filters: FILTERS,
    dimensions: DIMENSIONS,
    absentIsZero: false,
    uiSection: 'webhooks',
    evaluate: failureRate,
    async contributors(ctx, query, series) {
      const endpoint = query.by === 'endpoint' ? series : query.filters.endpoint
      let attempts = webhookDb(ctx.storage).selectFrom('webhook_attempts').select(['endpoint_id', 'status', 'started_at', 'response', 'error']).where('project_id', '=', query.projectId).where('started_at', '<', query.toMs)
      if (endpoint !== undefined) attempts = attempts.where('endpoint_id', '=', endpoint)
      const rows = await attempts.orderBy('started_at', 'desc').limit(LAST_ATTEMPTS).execute()
      return rows.map((row) => {
        const response = row.response === null ? null : ctx.storage.parseJson<{ statusCode?: number }>(row.response)
        return { label: `${row.endpoint_id} ${row.status}`, detail: response?.statusCode !== undefined ? `HTTP ${response.statusCode}` : (row.error ?? undefined), at: new Date(Number(row.started_at)).toISOString() }
      })
    },
  },
  {
    name: 'webhooks.oldest_pending',
    description: 'Seconds the oldest pending delivery has waited (a stuck queue)',
    unit: 'seconds',
    aggregates: ['max'],
    filters: FILTERS,
    dimensions: DIMENSIONS,
    absentIsZero: true,
    uiSection: 'webhooks',
    evaluate: oldestPending,
  },
]
