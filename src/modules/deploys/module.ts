import { Type } from 'typebox'
import { columnEquals, defineModule } from '../module.ts'
import { DeployPayload, deployExamples } from './payload.ts'
import { deployMigrations } from './migrations.ts'
import { deployReads, isFailedDeploy } from './reads.ts'
import { deploySignals } from './signals.ts'

export const deploysModule = defineModule({
  type: 'deploy',
  name: 'deploys',
  basePath: '/api/modules/deploys',
  payload: DeployPayload,
  examples: deployExamples,
  table: 'deploy_events',
  columnar: true,
  migrations: deployMigrations,
  columns: (d) => ({ service: d.service, environment: d.environment ?? null, status: d.status ?? null, version: d.version ?? null }),
  filters: {
    service: columnEquals('service', Type.String()),
    environment: columnEquals('environment', Type.String()),
    status: columnEquals('status', Type.String()),
    release: {
      schema: Type.String({ description: 'deploys of this release: its `release` field (set it to the release your SDK reports when it differs from `version`), else its `version`' }),
      scans: true,
      apply: (query, value: string, storage) => query.where((eb) => eb.or([eb(storage.jsonPathText('data', ['release']), '=', value), eb.and([eb(storage.jsonPathText('data', ['release']), 'is', null), eb('version', '=', value)])])),
    },
  },
  summaries: {
    latest: { table: 'deploy_target_summary', columns: ['service', 'environment'] },
  },
  signals: deploySignals,
  changes: {
    kind: 'deploy',
    describe: (d) => {
      const given = (d as { release?: unknown }).release
      const release = typeof given === 'string' ? given : (d.version ?? d.service)
      const where = d.environment ? ` to ${d.environment}` : ''
      const status = d.status ? ` (${d.status})` : ''
      return { title: `${d.service}${d.version ? ` ${d.version}` : ''} deployed${where}${status}`, subject: release, service: d.service, environment: d.environment, commit: d.commit }
    },
  },
  routes: deployReads,
  // A failed deploy (the same statuses the reads flag) is announced to webhook endpoints subscribed to deploy.failed, in the ingest transaction.
  async afterWrite(trx, events, ctx) {
    for (const event of events) {
      if (!isFailedDeploy(event.data.status)) continue
      await ctx.notifications.publish(trx, event.projectId, 'deploy.failed', { eventId: event.id, ts: new Date(event.ts).toISOString(), ...event.data })
    }
  },
})
