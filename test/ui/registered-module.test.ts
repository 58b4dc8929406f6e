import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Type } from 'typebox'
import { Text } from '../../src/modules/fields.ts'
import { columnEquals, defineModule } from '../../src/modules/module.ts'
import { registerModule } from '../../src/modules/registry.ts'
import { createEventTableV1 } from '../../src/storage/frozen/event-table-v1.ts'
import { openBrowser, signIn, type Browser } from './browser.ts'

// Issue "the web UI becomes an investigation tool", point 6: a type the UI has never heard of, registered as a
// contributor's one line in registry.ts would, gets a navigation entry and the generic events page.
const heartbeatModule = defineModule({
  type: 'heartbeat',
  name: 'heartbeat',
  basePath: '/api/modules/heartbeat',
  payload: Type.Object({ monitor: Text('the check’s name'), status: Text('up or down') }, { additionalProperties: true }),
  examples: {
    valid: { monitor: 'homepage', status: 'up' },
    invalid: { data: { status: 'up' }, reason: 'data.monitor: required' },
  },
  table: 'heartbeat_events',
  migrations: [{ name: 'heartbeat/001_heartbeat_events', up: (db, t) => createEventTableV1(db, t, 'heartbeat_events', [['monitor', 'text']], [['monitor']]) }],
  columns: (data) => ({ monitor: data.monitor }),
  filters: { monitor: columnEquals('monitor', Type.String()) },
})

// Before the portal's code is loaded, as the line in registry.ts would be.
registerModule(heartbeatModule)
const { createProject, event, ingest, startTestPortal } = await import('../support/portal.ts')

describe('a module registered at run time in Chromium', () => {
  let t: Awaited<ReturnType<typeof startTestPortal>>
  let browser: Browser
  before(async () => {
    t = await startTestPortal('sqlite')
    browser = await openBrowser()
  })
  after(async () => {
    await browser?.close()
    await t?.close()
  })

  test('with no page of its own, it gets a navigation entry whose generic page lists its events', async () => {
    const project = await createProject(t, 'heartbeats')
    const sent = await ingest(t, project, [event('heartbeat', { monitor: 'checkout-api', status: 'down', region: 'eu-west' })])
    assert.deepEqual(sent.body, { accepted: 1, rejected: [] })

    const page = await browser.context.newPage()
    await signIn(page, `${t.url}/p/${project.id}`, t.viewerToken)
    await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'heartbeat', exact: true }).click()
    await page.getByRole('heading', { name: 'heartbeat events' }).waitFor()
    assert.equal(new URL(page.url()).pathname, `/p/${project.id}/events/heartbeat`)
    const row = page.locator('tbody tr').filter({ hasText: '"monitor": "checkout-api"' })
    await row.waitFor()
    assert.match((await row.textContent())!, /"status": "down".*"region": "eu-west"/s)
    assert.equal(await page.locator('tbody tr').count(), 1)
  })
})
