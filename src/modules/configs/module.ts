import { Type } from 'typebox'
import { columnEquals, defineModule } from '../module.ts'
import { ConfigPayload, configExamples } from './payload.ts'
import { configMigrations } from './migrations.ts'
import { configReads } from './reads.ts'
import { configSignals } from './signals.ts'
import { configPathSummary } from './summaries.ts'

export const configsModule = defineModule({
  type: 'config',
  name: 'configs',
  basePath: '/api/modules/configs',
  payload: ConfigPayload,
  examples: configExamples,
  table: 'config_events',
  columnar: true,
  migrations: configMigrations,
  columns: (d) => ({ path: d.path, actor: d.actor ?? null }),
  filters: {
    path: columnEquals('path', Type.String()),
    actor: columnEquals('actor', Type.String()),
  },
  summaries: {
    paths: configPathSummary,
  },
  retention: { expiring: [{ table: 'config_path_hours', timeColumn: 'hour', key: ['project_id', 'hour', 'group_key'] }] },
  signals: configSignals,
  changes: {
    kind: 'config',
    describe: (d) => ({ title: `${d.path} changed${d.actor ? ` by ${d.actor}` : ''}`, subject: d.path, actor: d.actor }),
  },
  routes: configReads,
})
