import type { AlertSignal, SeriesValue } from '../../alerts/signal.ts'
import { releaseHealth, type ReleaseHealth } from './health.ts'

const COUNTED = { sessions: ['sessions', 'crashedSessions'], users: ['users', 'crashedUsers'] } as const

export const sessionSignals: AlertSignal[] = [
  {
    name: 'sessions.crash_free',
    description: 'Crash-free sessions (or users) started in the window, in % (release health from Sentry SDKs)',
    unit: '%',
    aggregates: ['sessions', 'users'],
    filters: { release: 'the release', environment: 'the environment' },
    dimensions: { release: 'the release', environment: 'the environment' },
    // No session in the window is no data, not 100 % crash-free.
    absentIsZero: false,
    uiSection: 'releases',
    async evaluate(ctx, query) {
      const rows = await releaseHealth(ctx.storage.db, { projectId: query.projectId, fromMs: query.fromMs, toMs: query.toMs, release: query.filters.release, environment: query.filters.environment })
      const [all, crashed] = COUNTED[query.aggregate as keyof typeof COUNTED] ?? COUNTED.sessions
      const totals = new Map<string, { all: number; crashed: number }>()
      for (const row of rows) {
        const series = query.by === undefined ? '' : String(row[query.by as keyof ReleaseHealth] ?? '')
        const total = totals.get(series) ?? { all: 0, crashed: 0 }
        // Users are distinct per release and environment: summed across several, a user counts in each.
        total.all += row[all]
        total.crashed += row[crashed]
        totals.set(series, total)
      }
      const values: SeriesValue[] = []
      for (const [series, total] of totals) if (total.all > 0) values.push({ series, value: (100 * (total.all - total.crashed)) / total.all })
      return values
    },
  },
]
