import { Type } from 'typebox'
import { columnEquals, defineModule } from '../modules/module.ts'
import { ErrorPayload } from './payload.ts'
import { errorMigrations } from './migrations.ts'

export const errorsModule = defineModule({
  type: 'error',
  name: 'errors',
  basePath: '/api/errors',
  payload: ErrorPayload,
  check: (d) => (d.name === undefined && d.message === undefined ? 'data.name: required when data.message is absent' : undefined),
  table: 'error_events',
  migrations: errorMigrations,
  columns: (d) => ({ name: d.name ?? null, environment: d.environment ?? null, release: d.release ?? null }),
  filters: {
    name: columnEquals('name', Type.String()),
    environment: columnEquals('environment', Type.String()),
    release: columnEquals('release', Type.String()),
  },
})
