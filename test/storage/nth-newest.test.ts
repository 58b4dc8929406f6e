import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Kysely } from 'kysely'
import { createProject, DIALECTS, event, startTestPortal, type Dialect, type TestPortal, type TestProject } from '../support/portal.ts'
import { ingestAll } from '../support/module-reads.ts'
import { afterCursor } from '../../src/http/list.ts'
import { encodeCursor } from '../../src/ids.ts'

// `EventStore.nthNewest` finds where a scanning page's window ends (src/modules/event-reads.ts). DuckDB
// counts back over widening time spans rather than sorting every row, so the rows here are spread as
// that search meets them: seconds, a day and years back, with equal times, and a sibling project's rows.
const STORES: { name: string; dialect: Dialect; env: Record<string, string> }[] = [
  ...DIALECTS.map((dialect) => ({ name: dialect, dialect, env: { EVENT_STORE: 'sqlite' } })),
  ...(DIALECTS.includes('sqlite') ? [{ name: 'duckdb', dialect: 'sqlite' as const, env: { EVENT_STORE: 'duckdb' } }] : []),
]

const NOW = Date.now()
const AGES_MS = [0, 0, 1_000, 30_000, 61_000, 61_000, 86_400_000, 3 * 86_400_000, 400 * 86_400_000, 5 * 365 * 86_400_000, 5 * 365 * 86_400_000]

for (const store of STORES) {
  describe(`the n-th newest event on the ${store.name} event store`, () => {
    let t: TestPortal
    let project: TestProject
    let expected: { ts: number; id: string }[]
    const rows = (cursor?: string) => {
      const events = t.portal.ctx.storage.eventsOf('log_events').db as unknown as Kysely<any>
      return afterCursor(events.selectFrom('log_events').where('project_id', '=', project.id), cursor, 'ts', 'id')
    }
    before(async () => {
      t = await startTestPortal(store.dialect, store.env)
      project = await createProject(t, 'spread')
      const sibling = await createProject(t, 'sibling')
      await ingestAll(t, project, AGES_MS.map((age, i) => event('log', { message: `m${i}` }, new Date(NOW - age).toISOString())))
      await ingestAll(t, sibling, [event('log', { message: 'newer, elsewhere' }, new Date(NOW + 1_000).toISOString())])
      const stored = await (t.portal.ctx.storage.eventsOf('log_events').db as unknown as Kysely<any>)
        .selectFrom('log_events')
        .select(['ts', 'id'])
        .where('project_id', '=', project.id)
        .execute()
      expected = stored.map((row) => ({ ts: Number(row.ts), id: String(row.id) })).sort((a, b) => b.ts - a.ts || (a.id < b.id ? 1 : -1))
    })
    after(() => t.close())

    test('every position from the newest to the oldest, and none past it', async () => {
      const events = t.portal.ctx.storage.eventsOf('log_events')
      for (let n = 1; n <= AGES_MS.length; n++) assert.deepEqual(await events.nthNewest(rows(), n), expected[n - 1], `n=${n}`)
      assert.equal(await events.nthNewest(rows(), AGES_MS.length + 1), undefined)
    })

    test('after a cursor, counting from the event after it', async () => {
      const events = t.portal.ctx.storage.eventsOf('log_events')
      for (const at of [0, 1, 4, 8]) {
        const cursor = encodeCursor([expected[at].ts, expected[at].id])
        for (let n = 1; n < AGES_MS.length - at; n++) assert.deepEqual(await events.nthNewest(rows(cursor), n), expected[at + n], `after ${at}, n=${n}`)
        assert.equal(await events.nthNewest(rows(cursor), AGES_MS.length - at), undefined, `after ${at}`)
      }
    })
  })
}
