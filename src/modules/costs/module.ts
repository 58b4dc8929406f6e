import { Type } from 'typebox'
import { columnEquals, defineModule } from '../module.ts'
import { CostPayload, costExamples } from './payload.ts'
import { costMigrations } from './migrations.ts'
import { costReads } from './reads.ts'
import { costSignals } from './signals.ts'

export const costsModule = defineModule({
  type: 'cost',
  name: 'costs',
  basePath: '/api/modules/costs',
  payload: CostPayload,
  examples: costExamples,
  table: 'cost_events',
  columnar: true,
  migrations: costMigrations,
  columns: (d, event) => ({
    provider: d.provider ?? null,
    service: d.service ?? null,
    region: d.region ?? null,
    amount: d.amount,
    currency: d.currency,
    period: d.period ?? new Date(event.ts).toISOString().slice(0, 7),
  }),
  filters: {
    provider: columnEquals('provider', Type.String()),
    service: columnEquals('service', Type.String()),
    region: columnEquals('region', Type.String()),
    currency: columnEquals('currency', Type.String()),
    period: columnEquals('period', Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$' })),
  },
  signals: costSignals,
  routes: costReads,
})
