// The ingest writer's worker thread (src/ingest/ingest-writer.ts is the event loop thread's end): it opens the
// portal's database with the lock it shares with the event loop's thread and group-commits the batches it is
// sent, so the statements of an ingest (the rows, the summaries, the error groups, the idempotency records) and
// its commit run on this thread's core. Closed, it waits to open the next portal's database: loading this
// thread's code is the costly part of starting it.
import { parentPort } from 'node:worker_threads'
import type { Config } from '../config.ts'
import type { WriteContext } from '../context.ts'
import { moduleByType } from '../modules/registry.ts'
import { createGroupCommitter, type GroupCommitter } from '../storage/group-commit.ts'
import { openStorage } from '../storage/open-storage.ts'
import { PoolExhaustedError, type Storage, type WriterThread } from '../storage/storage.ts'
import { storageOptions } from '../storage-options.ts'
import { webhookNotifications } from '../webhooks/enqueue.ts'
import { MAX_BATCHES_PER_TRANSACTION, writeIngestBatches, type IngestBatch } from './write-batches.ts'
import type { WriterAnswer, WriterMessage } from './ingest-writer.ts'
import { unpackBatch, type PackedBatch } from './packed-batch.ts'
import { withAlertTriggers } from '../alerts/triggers.ts'

const port = parentPort!
/** answers given in this turn of the thread's loop (the batches of one commit, say), posted together at its end */
let answers: WriterAnswer[] = []
const answer = (message: WriterAnswer) => {
  answers.push(message)
  if (answers.length === 1) setImmediate(postAnswers)
}
function postAnswers() {
  port.postMessage(answers)
  answers = []
}

interface Writing {
  storage: Storage
  committer: GroupCommitter<IngestBatch, { stored: boolean; forgotApiKeys: boolean }>
}

async function open(config: Config, writerThread: WriterThread): Promise<Writing> {
  const storage = await openStorage(config.databaseUrl, { ...storageOptions(config), writerThread })
  /** set by a transaction that changed an ingest limit: the event loop's thread forgets its API-key principals */
  let forgotApiKeys = false
  const ctx: WriteContext = {
    storage,
    notifications: withAlertTriggers(webhookNotifications({ attempts: config.webhooks.retrySchedule.length + 1, parseJson: storage.parseJson })),
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
  return { storage, committer }
}

/** the database being written; batches that arrive while it opens wait for it */
let writing: Promise<Writing> | undefined

port.on('message', async (message: WriterMessage) => {
  if (message.kind === 'open') {
    writing = open(message.config, message.writerThread)
    return writing.then(
      () => answer({ kind: 'ready' }),
      (error: Error) => answer({ kind: 'unopened', error: { message: error.message, name: error.name, code: (error as { code?: string }).code } }),
    )
  }
  if (message.kind === 'close') {
    // a database that could not be opened has nothing to close
    const closing = await writing?.catch(() => undefined)
    writing = undefined
    await closing?.committer.close()
    await closing?.storage.close()
    return answer({ kind: 'closed' })
  }
  for (const { id, batch } of message.batches) void write(id, batch)
})

async function write(id: number, batch: PackedBatch) {
  const accepted = unpackBatch(batch).map(({ type, id, ts, receivedAt, dataJson }) => ({
    module: moduleByType.get(type)!,
    event: { id, projectId: batch.projectId, ts, receivedAt, data: JSON.parse(dataJson) as Record<string, unknown> },
    dataJson,
  }))
  try {
    const { committer } = await writing!
    answer({ kind: 'written', id, ...(await committer.write({ projectId: batch.projectId, key: batch.key, response: batch.response, accepted })) })
  } catch (error) {
    const { message, code, name } = error as { message?: string; code?: string; name?: string }
    const pool: ConstructorParameters<typeof PoolExhaustedError> | undefined = error instanceof PoolExhaustedError ? [error.pool, error.size, error.waitedMs] : undefined
    answer({ kind: 'failed', id, error: { message: String(message), code, name: String(name), pool } })
  }
}
