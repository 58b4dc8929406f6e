import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { createProject, event, ingest, startTestPortal } from '../support/portal.ts'

describe('load shedding', () => {
  test('a lagging event loop gives 503 with Retry-After, while health still answers', async () => {
    const t = await startTestPortal('sqlite', { LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '100', LOAD_SHED_RETRY_AFTER_SECONDS: '3' })
    try {
      const p = await createProject(t)
      await sleep(1200) // past the start-up grace
      assert.equal((await ingest(t, p, [event('log', { message: 'calm' })])).status, 200)
      // The portal runs in this process: blocking this thread in 200 ms slices is its event loop lagging.
      let lagging = true
      const lag = (async () => {
        while (lagging) {
          const until = Date.now() + 200
          while (Date.now() < until);
          await new Promise((resolve) => setImmediate(resolve))
        }
      })()
      await sleep(1200)
      const shed = await ingest(t, p, [event('log', { message: 'busy' })])
      const health = await t.request('GET', '/api/health')
      lagging = false
      await lag
      assert.equal(shed.status, 503)
      assert.equal(shed.body.code, 'overloaded')
      assert.equal(shed.headers.get('retry-after'), '3')
      assert.equal(health.status, 200)
      await sleep(1200)
      assert.equal((await ingest(t, p, [event('log', { message: 'recovered' })])).status, 200, 'it recovers by itself')
    } finally {
      await t.close()
    }
  })
})
