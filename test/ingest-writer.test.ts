import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { IngestWriter } from '../src/ingest/ingest-writer.ts'
import { createIngestPipeline } from '../src/ingest/pipeline.ts'
import { WriterLock } from '../src/storage/sqlite/writer-lock.ts'
import { watchEventLoop } from './support/event-loop.ts'
import { createProject, DIALECTS, event, ingest, readAll, startTestPortal } from './support/portal.ts'

const EVENTS = 20_000

for (const dialect of DIALECTS) {
  describe(`ingest's storage work on ${dialect}`, () => {
    test('a large batch commits while the event loop goes on, and the portal writes and reads beside it', { timeout: 120_000 }, async () => {
      const t = await startTestPortal(dialect)
      const pipeline = await createIngestPipeline(t.portal.ctx)
      try {
        const project = await createProject(t)
        const events = Array.from({ length: EVENTS }, (_, i) => event('log', { level: i % 10 === 0 ? 'error' : 'info', module: `module-${i % 7}`, message: `line ${i}` }))
        const { accepted } = await pipeline.check(project.id, events, Date.now())
        assert.equal(accepted.length, EVENTS)

        const eventLoop = watchEventLoop(2)
        const started = performance.now()
        const committed = pipeline.commit({ projectId: project.id, key: undefined, response: { statusCode: 200, body: '{}' }, accepted }).then((stored) => ({ stored, took: performance.now() - started }))
        // Meanwhile a write of the event loop's thread (a project and its key) and an ingest through HTTP go through.
        const beside = await createProject(t, 'made beside the batch')
        assert.equal((await ingest(t, beside, [event('log', { level: 'info', message: 'beside the batch' })])).status, 200)
        const { stored, took } = await committed
        const longestGap = eventLoop.stop()

        assert.equal(stored, true)
        assert.ok(took > 100, `the commit is long enough to tell (${took.toFixed(0)} ms)`)
        // On the event loop's thread, the SQLite rows of the batch were one pause of the whole commit's length.
        assert.ok(longestGap < took / 2, `the event loop went on during the ${took.toFixed(0)} ms commit (longest pause ${longestGap.toFixed(0)} ms)`)
        const levels = await t.request('GET', `/api/modules/logs/levels?project_id=${project.id}`, { token: t.adminToken })
        assert.equal(levels.status, 200, levels.text)
        const counts = Object.fromEntries((levels.body.data as { level: string; count: number }[]).map(({ level, count }) => [level, count]))
        assert.deepEqual(counts, { error: EVENTS / 10, info: EVENTS - EVENTS / 10 })
        assert.deepEqual((await readAll(t, `/api/modules/logs/events?project_id=${beside.id}`)).map((log) => log.data.message), ['beside the batch'])
      } finally {
        await pipeline.close()
        await t.close()
      }
    })
  })
}

test('a writer thread that cannot open the database fails the start with the reason, and is let go', { timeout: 60_000 }, async () => {
  const t = await startTestPortal('sqlite')
  try {
    // a database under a path that is a file: its folder cannot be made
    const ctx = { ...t.portal.ctx, config: { ...t.config, databaseUrl: `sqlite:${fileURLToPath(import.meta.url)}/portal.db` } }
    await assert.rejects(IngestWriter.start(ctx, new WriterLock().shared), /EEXIST/)
  } finally {
    await t.close()
  }
})

test('turns at the SQLite writer go in order, and a thread that ended does not keep the others waiting', async () => {
  const lock = new WriterLock()
  const worker = new WriterLock(lock.shared)
  const holder = worker.newHolder()
  const order: string[] = []
  await worker.acquire(holder)
  const mainTurn = lock.acquire(WriterLock.MAIN).then(() => order.push('main'))
  const workerAgain = worker.acquire(holder).then(() => order.push('worker again'))
  await new Promise((resolve) => setTimeout(resolve, 20))
  assert.deepEqual(order, [], 'nobody goes while the turn is held')
  worker.release()
  await mainTurn
  assert.deepEqual(order, ['main'], 'first come, first served: the worker waits for the turn the main thread asked for first')
  lock.release()
  await workerAgain
  assert.deepEqual(order, ['main', 'worker again'])

  // The worker ends holding its turn: the main thread lets the next caller in.
  const next = lock.acquire(WriterLock.MAIN)
  worker.abandon(holder)
  await next
  lock.release()

  // The worker ends waiting for a turn: when that turn comes, it is passed over.
  await lock.acquire(WriterLock.MAIN)
  void worker.acquire(holder)
  const after = lock.acquire(WriterLock.MAIN)
  lock.abandon(holder)
  lock.release()
  await after
  lock.release()
})
