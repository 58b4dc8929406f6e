import { Type } from 'typebox'
import { columnEquals, defineModule } from '../module.ts'
import { FeatureFlagPayload, featureFlagExamples } from './payload.ts'
import { featureFlagMigrations } from './migrations.ts'
import { flagReads } from './reads.ts'
import { flagSignals } from './signals.ts'

export const flagsModule = defineModule({
  type: 'feature_flag',
  name: 'flags',
  basePath: '/api/flags',
  payload: FeatureFlagPayload,
  examples: featureFlagExamples,
  table: 'feature_flag_events',
  columnar: true,
  migrations: featureFlagMigrations,
  columns: (d) => ({ flag_key: d.key, actor: d.actor ?? null }),
  filters: {
    key: columnEquals('flag_key', Type.String()),
    actor: columnEquals('actor', Type.String()),
  },
  summaries: {
    flags: { table: 'feature_flag_summary', columns: ['flag_key'] },
  },
  signals: flagSignals,
  routes: flagReads,
})
