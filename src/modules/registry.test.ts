import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Type } from 'typebox'
import { HttpUrl, NonNegative, Text } from '../modules/fields.ts'
import { columnEquals, defineModule } from '../modules/module.ts'
import { registerModule } from '../modules/registry.ts'
import { createEventTableV1 } from '../storage/frozen/event-table-v1.ts'

// A fourteenth event type written as a contributor would: a payload with its examples, a table, a
// filter. Nothing else in the portal names it; every assertion below proves that something followed
// the registry to it.
const UptimePayload = Type.Object(
  {
    monitor: Text('the check’s name'),
    url: HttpUrl('what was checked'),
    status: Text('up or down'),
    responseMs: Type.Optional(NonNegative('milliseconds')),
    region: Type.Optional(Text()),
  },
  { additionalProperties: true },
)

const uptimeModule = defineModule({
  type: 'uptime',
  name: 'uptime',
  basePath: '/api/modules/uptime',
  payload: UptimePayload,
  examples: {
    valid: { monitor: 'homepage', url: 'https://example.com/', status: 'up', responseMs: 84, region: 'eu-west' },
    invalid: { data: { monitor: 'homepage', url: 'example.com', status: 'up' }, reason: 'data.url: must be an absolute http(s) URL' },
  },
  table: 'uptime_events',
  migrations: [
    {
      name: 'uptime/001_uptime_events',
      up: (db, t) => createEventTableV1(db, t, 'uptime_events', [['monitor', 'text'], ['status', 'text']], [['monitor'], ['status']]),
    },
  ],
  columns: (d) => ({ monitor: d.monitor, status: d.status }),
  filters: {
    monitor: columnEquals('monitor', Type.String({ description: 'only this check' })),
    status: columnEquals('status', Type.String()),
  },
})

// Registered before the portal's code is loaded, as the one line in registry.ts would be.
registerModule(uptimeModule)
const { DIALECTS, createProject, event, ingest, startTestPortal } = await import('../../test/support/portal.ts')
const { renderEventTypes } = await import('../../sdk/scripts/generate-types.ts')

for (const dialect of DIALECTS) {
  describe(`a fourteenth module registered in-process, on ${dialect}`, () => {
    let t: Awaited<ReturnType<typeof startTestPortal>>
    before(async () => {
      t = await startTestPortal(dialect)
    })
    after(() => t.close())

    test('ingest validates it with its own schema, stores it, and its events read back filtered', async () => {
      const project = await createProject(t)
      const res = await ingest(t, project, [
        event('uptime', uptimeModule.examples.valid),
        event('uptime', { ...uptimeModule.examples.valid, monitor: 'api', status: 'down' }),
        event('uptime', uptimeModule.examples.invalid.data),
      ])
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(res.body, { accepted: 2, rejected: [{ index: 2, reason: uptimeModule.examples.invalid.reason }] })

      const down = await t.request('GET', `/api/modules/uptime/events?project_id=${project.id}&status=down`, { token: t.viewerToken })
      assert.equal(down.status, 200, down.text)
      assert.deepEqual(
        down.body.data.map((e: any) => [e.type, e.data.monitor]),
        [['uptime', 'api']],
      )

      const status = await t.request('GET', `/api/modules/uptime/status?project_id=${project.id}`, { token: t.viewerToken })
      assert.equal(status.status, 200, status.text)
      assert.equal(status.body.module, 'uptime')
      assert.equal(status.body.eventType, 'uptime')
      assert.equal(status.body.events, 2)
    })

    test('an unknown type’s reason lists it among the event types', async () => {
      const project = await createProject(t)
      const res = await ingest(t, project, [event('nope', {})])
      assert.match(res.body.rejected[0].reason, /^type: must be one of .*\buptime$/)
    })

    test('the OpenAPI document describes its reads, its ingest payload and its example', async () => {
      const document = (await t.request('GET', '/api/openapi.json', { token: t.viewerToken })).body
      assert.ok(document.paths['/api/modules/uptime/events'].get, 'events read')
      assert.ok(document.paths['/api/modules/uptime/status'].get, 'status read')
      const filters = document.paths['/api/modules/uptime/events'].get.parameters.map((p: any) => p.name)
      assert.ok(filters.includes('monitor') && filters.includes('status'), filters.join())
      const payload = document.components.schemas.UptimePayload
      assert.ok(payload, 'a named payload component for uptime')
      assert.deepEqual(payload.required, ['monitor', 'url', 'status'])
      assert.deepEqual(payload.examples[0], uptimeModule.examples.valid)
      assert.match(document.components.schemas.IngestEvent.properties.type.description, /`uptime`/)
      assert.match(document.components.schemas.IngestEvent.properties.data.description, /`uptime` → `UptimePayload`/)
      assert.match(document.info.description, /\buptime\b/)
    })
  })
}

test('the SDK’s generated types give it a payload interface and a method', () => {
  const generated = renderEventTypes()
  assert.match(generated, /export interface UptimeData \{/)
  assert.match(generated, /\n  uptime: UptimeData\n/)
  assert.match(generated, /uptime\(data: UptimeData/)
})
