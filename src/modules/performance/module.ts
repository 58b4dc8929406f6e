import { Type } from 'typebox'
import { columnEquals, defineModule } from '../module.ts'
import { PerformancePayload, performanceExamples } from './payload.ts'
import { performanceMigrations } from './migrations.ts'
import { performanceReads } from './reads.ts'
import { performanceSignals } from './signals.ts'

export const performanceModule = defineModule({
  type: 'performance',
  name: 'performance',
  basePath: '/api/modules/performance',
  payload: PerformancePayload,
  examples: performanceExamples,
  table: 'performance_events',
  columnar: true,
  migrations: performanceMigrations,
  columns: (d) => ({ service: d.service ?? null, metric: d.metric, value: d.value, unit: d.unit ?? null }),
  filters: {
    service: columnEquals('service', Type.String()),
    metric: columnEquals('metric', Type.String()),
  },
  signals: performanceSignals,
  routes: performanceReads,
})
