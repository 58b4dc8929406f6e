// The ingest writer's worker thread (src/ingest/ingest-writer.ts is the event loop thread's end): it opens the
// portal's database with the lock it shares with the event loop's thread and group-commits the batches it is
// sent, each one message in and one answer out, so the statements of an ingest (the rows, the summaries, the
// error groups, the idempotency records) and its commit run on this thread's core.
import { parentPort, workerData } from 'node:worker_threads'
import type { Config } from '../config.ts'
import type { WriteContext } from '../context.ts'
import { moduleByType } from '../modules/registry.ts'
import { createGroupCommitter } from '../storage/group-commit.ts'
import { openStorage, PoolExhaustedError, type WriterThread } from '../storage/storage.ts'
import { storageOptions } from '../storage-options.ts'
import { webhookNotifications } from '../webhooks/enqueue.ts'
import { MAX_BATCHES_PER_TRANSACTION, writeIngestBatches, type IngestBatch } from './write-batches.ts'
import type { BatchMessage, WriterAnswer } from './ingest-writer.ts'

const { config, writerThread } = workerData as { config: Config; writerThread: WriterThread }
const port = parentPort!
const answer = (message: WriterAnswer) => port.postMessage(message)

const storage = await openStorage(config.databaseUrl, { ...storageOptions(config), writerThread })
/** set by a transaction that changed an ingest limit: the event loop's thread forgets its API-key principals */
let forgotApiKeys = false
const ctx: WriteContext = {
  storage,
  notifications: webhookNotifications({ attempts: config.webhooks.retrySchedule.length + 1, parseJson: storage.parseJson }),
  apiKeyPrincipals: { forget: async () => void (forgotApiKeys = true) },
}

const committer = createGroupCommitter<IngestBatch, { stored: boolean; forgotApiKeys: boolean }>(
  storage,
  async (trx, batches) => {
    forgotApiKeys = false
    const stored = await writeIngestBatches(trx, ctx, batches)
    return stored.map((one) => ({ stored: one, forgotApiKeys }))
  },
  MAX_BATCHES_PER_TRANSACTION,
  undefined,
  'ingest',
  // The event loop's thread keeps the backlog and counts conflicts (SQLite has none); commits it is told of.
  { trackBacklog: () => () => {}, countCommitConflict: () => {}, observeCommit: (_name, batches, seconds) => answer({ kind: 'commit', batches, seconds }) },
)

answer({ kind: 'ready' })
port.on('message', async (message: BatchMessage | { close: true }) => {
  if ('close' in message) {
    await committer.close()
    await storage.close()
    answer({ kind: 'closed' })
    return port.close()
  }
  const { id, batch } = message
  const accepted = batch.events.map(({ type, id, ts, receivedAt, dataJson }) => ({
    module: moduleByType.get(type)!,
    event: { id, projectId: batch.projectId, ts, receivedAt, data: JSON.parse(dataJson) as Record<string, unknown> },
    dataJson,
  }))
  committer.write({ projectId: batch.projectId, key: batch.key, response: batch.response, accepted }).then(
    (result) => answer({ kind: 'written', id, ...result }),
    (error: { message?: string; code?: string; name?: string }) => {
      const pool: ConstructorParameters<typeof PoolExhaustedError> | undefined = error instanceof PoolExhaustedError ? [error.pool, error.size, error.waitedMs] : undefined
      answer({ kind: 'failed', id, error: { message: String(error?.message), code: error?.code, name: String(error?.name), pool } })
    },
  )
})
