import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql, type Kysely } from 'kysely'
import {
  DIALECTS,
  REDIS_URL,
  createProject,
  createTestDatabase,
  event,
  ingest,
  readAll,
  startTestPortal,
  startTestPortalOn,
  type Dialect,
  type TestDatabase,
  type TestPortal,
} from './support/portal.ts'

/** How late another portal may still honour a revoked key, a deleted project or a raised limit. */
const INVALIDATION_WITHIN_MS = 100
const KEYS = 40

/** Three portals over one database, as three instances behind a load balancer (limits high: not tested here). */
async function startThreePortals(dialect: Dialect, env: Record<string, string> = {}): Promise<{ portals: TestPortal[]; close(): Promise<void>; database: TestDatabase }> {
  const database = await createTestDatabase(dialect, { migrated: true })
  // These portals share one process: on one SQLite file they stand for the instances of PostgreSQL, not for a
  // deployment (a SQLite data folder has one portal process), and share the file's rows. DuckDB's event store
  // is one process's, and one portal's: the second would be refused (test/storage/event-store-choice.test.ts).
  const rows: Record<string, string> = dialect === 'sqlite' ? { EVENT_STORE: 'sqlite' } : {}
  const limits = { INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000', INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '1000000', ...rows, ...env }
  const portals: TestPortal[] = []
  for (let i = 0; i < 3; i++) portals.push(await startTestPortalOn(dialect, database, limits))
  return {
    portals,
    database,
    async close() {
      for (const portal of portals) await portal.close()
      await database.drop()
    },
  }
}

/** PostgreSQL's count of deadlocks in this database, once the backends have reported theirs. */
async function deadlocks(db: Kysely<any>): Promise<number> {
  await sleep(1_500) // a backend reports its counters to the shared statistics about once a second
  await sql`select pg_stat_clear_snapshot()`.execute(db)
  const row = await sql<{ deadlocks: string }>`select deadlocks from pg_stat_database where datname = current_database()`.execute(db)
  return Number(row.rows[0].deadlocks)
}

for (const dialect of DIALECTS) {
  describe(`three portals on one ${dialect} database`, () => {
    let three: Awaited<ReturnType<typeof startThreePortals>>
    before(async () => {
      three = await startThreePortals(dialect)
    })
    after(() => three.close())

    test('one set of idempotency keys sent to all three at once, in three orders: no deadlock, each batch stored once', async () => {
      const { portals } = three
      const project = await createProject(portals[0])
      const keys = Array.from({ length: KEYS }, () => randomUUID())
      // A retry repeats the very body: one body per key, whichever portal it is sent to.
      const bodies = new Map(keys.map((key) => [key, JSON.stringify({ events: [event('log', { message: `key ${key}` })] })]))
      const countBefore = dialect === 'postgres' ? await deadlocks(portals[0].portal.ctx.storage.db) : 0
      // Each portal receives every key, in its own order, all at once: its group commit claims them in one transaction.
      const orders = [keys, [...keys].reverse(), keys.map((_, i) => keys[(i * 7) % KEYS])]
      const answers = await Promise.all(
        portals.flatMap((portal, index) => orders[index].map((key) => ingest(portal, project, bodies.get(key)!, { 'x-service-idempotency-key': key }))),
      )
      for (const answer of answers) assert.ok(answer.status === 200 || answer.status === 409, `${answer.status} ${answer.text}`)
      const logs = await readAll(portals[0], `/api/modules/logs/events?project_id=${project.id}`)
      assert.equal(logs.length, KEYS, 'each key stored its batch exactly once')
      assert.deepEqual(new Set(logs.map((log) => log.data.message)), new Set(keys.map((key) => `key ${key}`)))
      if (dialect === 'postgres') assert.equal(await deadlocks(portals[0].portal.ctx.storage.db), countBefore, 'PostgreSQL detected no deadlock')
    })

    test('captures of one new error through all three open one group, with an exact count', async () => {
      const { portals } = three
      const project = await createProject(portals[0])
      const captures = Array.from({ length: 60 }, (_, i) =>
        portals[i % 3].request('POST', '/api/errors/capture', { token: project.key, body: { name: 'SpreadError', message: `order ${i} failed` } }),
      )
      const answers = await Promise.all(captures)
      assert.deepEqual([...new Set(answers.map((answer) => answer.status))], [201])
      assert.equal(answers.filter((answer) => answer.body.isNewGroup).length, 1)
      const groups = await portals[1].request('GET', `/api/errors/groups?project_id=${project.id}`, { token: portals[1].adminToken })
      assert.equal(groups.body.data.length, 1)
      assert.equal(groups.body.data[0].count, 60)
    })

    test('captures of different errors of one project through all three: every group exact', async () => {
      const { portals } = three
      const project = await createProject(portals[0])
      const answers = await Promise.all(
        Array.from({ length: 90 }, (_, i) =>
          portals[i % 3].request('POST', '/api/errors/capture', { token: project.key, body: { name: `Error${i % 5}`, message: 'failed' } }),
        ),
      )
      assert.deepEqual([...new Set(answers.map((answer) => answer.status))], [201])
      assert.equal(answers.filter((answer) => answer.body.isNewGroup).length, 5)
      const groups = await portals[2].request('GET', `/api/errors/groups?project_id=${project.id}`, { token: portals[2].adminToken })
      assert.deepEqual(groups.body.data.map((group: any) => group.count), [18, 18, 18, 18, 18])
    })

    test(`a key revoked through one portal is refused by the others within ${INVALIDATION_WITHIN_MS} ms`, async () => {
      const { portals } = three
      const project = await createProject(portals[0])
      for (const portal of portals) assert.equal((await ingest(portal, project, [event('log', { message: 'kept' })])).status, 200, 'each portal keeps the principal')
      assert.equal((await portals[0].request('DELETE', `/api/projects/${project.id}/keys/${project.keyId}`, { token: portals[0].adminToken })).status, 204)
      await sleep(INVALIDATION_WITHIN_MS)
      for (const portal of portals.slice(1)) assert.equal((await ingest(portal, project, [event('log', { message: 'refused' })])).status, 401)
    })

    test(`a project deleted through one portal is refused by the others within ${INVALIDATION_WITHIN_MS} ms`, async () => {
      const { portals } = three
      const project = await createProject(portals[1])
      for (const portal of portals) assert.equal((await ingest(portal, project, [event('log', { message: 'kept' })])).status, 200)
      assert.equal((await portals[1].request('DELETE', `/api/projects/${project.id}`, { token: portals[1].adminToken })).status, 204)
      await sleep(INVALIDATION_WITHIN_MS)
      for (const portal of [portals[0], portals[2]]) assert.equal((await ingest(portal, project, [event('log', { message: 'refused' })])).status, 401)
    })

    test(`a tenant limit lowered through one portal holds on the others within ${INVALIDATION_WITHIN_MS} ms`, async () => {
      const { portals } = three
      const project = await createProject(portals[0])
      for (const portal of portals) assert.equal((await ingest(portal, project, [event('log', { message: 'kept' })])).status, 200)
      assert.equal((await ingest(portals[2], project, [event('tenant', { plan: 'free', ingestLimitPerSecond: 5000 })])).status, 200)
      await sleep(INVALIDATION_WITHIN_MS)
      for (const portal of portals.slice(0, 2)) {
        const answer = await ingest(portal, project, [event('log', { message: 'limited' })])
        assert.equal(answer.status, 200)
        assert.equal(answer.headers.get('ratelimit-limit'), '5000', 'the events bucket, now the closer one, has the lowered limit')
      }
    })
  })
}

describe('three portals on one PostgreSQL database and one Redis', { skip: !DIALECTS.includes('postgres') && 'TEST_DATABASES excludes postgres' }, () => {
  test(`a key revoked through one portal is refused by the others within ${INVALIDATION_WITHIN_MS} ms`, async () => {
    const three = await startThreePortals('postgres', { REDIS_URL })
    try {
      const { portals } = three
      const project = await createProject(portals[0])
      for (const portal of portals) assert.equal((await ingest(portal, project, [event('log', { message: 'kept' })])).status, 200)
      assert.equal((await portals[0].request('DELETE', `/api/projects/${project.id}/keys/${project.keyId}`, { token: portals[0].adminToken })).status, 204)
      await sleep(INVALIDATION_WITHIN_MS)
      for (const portal of portals.slice(1)) assert.equal((await ingest(portal, project, [event('log', { message: 'refused' })])).status, 401)
    } finally {
      await three.close()
    }
  })
})

for (const dialect of DIALECTS) {
  describe(`a busy database pool on ${dialect}`, () => {
    let t: TestPortal
    before(async () => {
      t = await startTestPortal(dialect, { DATABASE_POOL_SIZE: '1', DATABASE_POOL_WAIT_MS: '200' })
    })
    after(() => t.close())

    /** What a client does with a 503 and its Retry-After: the portal's own background work shares the one connection. */
    async function retriedWhileOverloaded<T>(attempt: () => Promise<T>, overloaded: (result: T) => boolean): Promise<T> {
      for (let tries = 1; ; tries++) {
        const result = await attempt()
        if (!overloaded(result) || tries === 20) return result
        await sleep(250)
      }
    }

    test('a request that waits for a connection beyond DATABASE_POOL_WAIT_MS gets 503 overloaded naming the pool', async () => {
      const project = await retriedWhileOverloaded(
        () => createProject(t).catch((error: Error) => error),
        (result) => result instanceof Error && result.message.includes('503'),
      )
      if (project instanceof Error) throw project
      let release!: () => void
      const held = new Promise<void>((resolve) => (release = resolve))
      let holding!: () => void
      const taken = new Promise<void>((resolve) => (holding = resolve))
      // A transaction that keeps the pool's one connection (on SQLite, the one writing connection), as a long write would.
      const transaction = t.portal.ctx.storage.db.transaction().execute(async () => {
        holding()
        await held
      })
      await taken
      try {
        const answer = await ingest(t, project, [event('log', { message: 'waits for the writer' })])
        assert.equal(answer.status, 503, answer.text)
        assert.equal(answer.body.code, 'overloaded')
        assert.match(answer.body.detail, new RegExp(`${dialect} database pool \\(1 connection\\).*200 ms`))
        assert.equal(answer.headers.get('retry-after'), '1')
      } finally {
        release()
        await transaction
      }
      const after = await retriedWhileOverloaded(() => ingest(t, project, [event('log', { message: 'written' })]), (answer) => answer.status === 503)
      assert.equal(after.status, 200, 'served again once the connection is free')
    })
  })

  describe(`RateLimit headers on ${dialect}`, () => {
    let t: TestPortal
    before(async () => {
      t = await startTestPortal(dialect, { INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000', INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '4' })
    })
    after(() => t.close())

    test('an admitted batch reports the bucket closer to refusing: batches for small batches, events for large ones', async () => {
      const project = await createProject(t)
      const small = await ingest(t, project, [event('log', { message: 'one' })])
      assert.equal(small.status, 200)
      assert.equal(small.headers.get('ratelimit-limit'), '4', 'a quarter of the batches is used, a thousandth of the events')
      assert.equal(small.headers.get('ratelimit-remaining'), '3')
      const large = await ingest(t, project, Array.from({ length: 900 }, (_, i) => event('log', { message: `m${i}` })))
      assert.equal(large.status, 200)
      assert.equal(large.headers.get('ratelimit-limit'), '1000', 'now under a tenth of the events is left, half of the batches')
      assert.ok(Number(large.headers.get('ratelimit-remaining')) < 500)
    })
  })
}
