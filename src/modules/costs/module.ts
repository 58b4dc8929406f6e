import { Type } from 'typebox'
import { columnEquals, defineModule } from '../module.ts'
import { CostPayload } from './payload.ts'
import { costMigrations } from './migrations.ts'

export const costsModule = defineModule({
  type: 'cost',
  name: 'costs',
  basePath: '/api/modules/costs',
  payload: CostPayload,
  table: 'cost_events',
  migrations: costMigrations,
  columns: (d) => ({
    provider: d.provider ?? null,
    service: d.service ?? null,
    region: d.region ?? null,
    amount: d.amount,
    currency: d.currency,
    period: d.period ?? null,
  }),
  filters: {
    provider: columnEquals('provider', Type.String()),
    service: columnEquals('service', Type.String()),
    region: columnEquals('region', Type.String()),
    currency: columnEquals('currency', Type.String()),
    period: columnEquals('period', Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$' })),
  },
})
