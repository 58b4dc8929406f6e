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
  changes: {
    kind: 'flag',
    describe: (d) => {
      const state = [d.enabled === undefined ? undefined : d.enabled ? 'on' : 'off', d.rollout === undefined ? undefined : `${d.rollout} %`].filter(Boolean).join(' at ')
      return { title: `flag ${d.key}${state ? ` → ${state}` : ' changed'}${d.actor ? ` by ${d.actor}` : ''}`, subject: d.key, actor: d.actor }
    },
  },
  routes: flagReads,
})
