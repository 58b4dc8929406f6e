import { Type } from 'typebox'
import { columnEquals, defineModule } from '../module.ts'
import { AuditPayload, auditExamples } from './payload.ts'
import { auditMigrations } from './migrations.ts'
import { auditReads } from './reads.ts'
import { auditSignals } from './signals.ts'

export const auditModule = defineModule({
  type: 'audit',
  name: 'audit',
  basePath: '/api/modules/audit',
  payload: AuditPayload,
  examples: auditExamples,
  table: 'audit_events',
  columnar: true,
  migrations: auditMigrations,
  columns: (d) => ({ actor: d.actor, action: d.action ?? null, resource: d.resource ?? null, status_code: d.statusCode ?? null }),
  filters: {
    actor: columnEquals('actor', Type.String()),
    action: columnEquals('action', Type.String()),
    resource: columnEquals('resource', Type.String()),
    status_code: columnEquals('status_code', Type.Integer({ minimum: 100, maximum: 599 })),
  },
  summaries: {
    actors: { table: 'audit_actor_summary', columns: ['actor'] },
  },
  // Who changed what is asked about long after the events it explains: kept a year unless configured.
  retention: { defaultDays: 365 },
  signals: auditSignals,
  routes: auditReads,
})
