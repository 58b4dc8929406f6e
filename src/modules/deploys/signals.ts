import { sql } from 'kysely'
import type { AlertSignal } from '../../alerts/signal.ts'
import { column, columnIs, countWindowEvents } from '../../alerts/event-window.ts'
import { FAILED_STATUSES } from './reads.ts'

export const deploySignals: AlertSignal[] = [
  {
    name: 'deploys.failed',
    description: `Failed deploys in the window (status ${[...FAILED_STATUSES].join(', ')}, any case)`,
    unit: 'deploys',
    aggregates: ['count'],
    filters: { service: 'the service', environment: 'the environment' },
    dimensions: { service: 'the service', environment: 'the environment' },
    absentIsZero: true,
    triggeredBy: ['deploy.failed'],
    uiSection: 'deploys',
    evaluate: (ctx, query) =>
      countWindowEvents(
        ctx,
        {
          table: 'deploy_events',
          filters: { service: columnIs('service'), environment: columnIs('environment') },
          dimensions: { service: column('service'), environment: column('environment') },
          where: (rows) => rows.where(sql`lower(status)`, 'in', [...FAILED_STATUSES]),
        },
        query,
      ),
  },
]
