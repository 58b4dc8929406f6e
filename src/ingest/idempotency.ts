import type { Kysely } from 'kysely'
import type { FastifyReply } from 'fastify'
import type { Database } from '../storage/tables.ts'
import { ProblemError } from '../http/problem.ts'

export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

// The column once told a repeat with another body apart; spec 4.1 replays it all the same, and migrations are frozen.
const UNUSED_REQUEST_HASH = ''

/** The OpenAPI header entry of a response that can be a replay. */
export const IDEMPOTENT_REPLAYED = {
  'Idempotent-Replayed': { type: 'string', enum: ['true'], description: '`true` when this is the first response to this idempotency key, replayed; absent otherwise' },
}

export interface StoredResponse {
  statusCode: number
  body: string
}

/** The `X-Service-Idempotency-Key` header, checked to be a UUID; undefined when absent. */
export function isUuid(text: string): boolean {
  return UUID.test(text)
}

export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  if (typeof header !== 'string' || !UUID.test(header)) {
    throw new ProblemError(400, 'invalid_idempotency_key', 'X-Service-Idempotency-Key: must be a UUID')
  }
  return header.toLowerCase()
}

/**
 * The response first given for this key within 24 hours, or undefined. Spec 4.1 rule 2: a repeat
 * gets that response whatever body it carries, so a client that rebuilds its batch before retrying
 * (fresh timestamps, say) still learns the outcome of the first send and stores nothing twice.
 */
export async function findStoredResponse(db: Kysely<Database>, projectId: string, key: string): Promise<StoredResponse | undefined> {
  const row = await db
    .selectFrom('idempotency_keys')
    .select(['status_code', 'response_body'])
    .where('project_id', '=', projectId)
    .where('key', '=', key)
    .where('created_at', '>', Date.now() - IDEMPOTENCY_RETENTION_MS)
    .executeTakeFirst()
  if (!row) return undefined
  return { statusCode: row.status_code, body: row.response_body }
}

/** Answers with the stored response, marked as a replay. */
export function replay(reply: FastifyReply, stored: StoredResponse) {
  return reply.code(stored.statusCode).header('idempotent-replayed', 'true').type('application/json').send(stored.body)
}

/**
 * Records the key and its response inside the transaction that stores the events. Returns false
 * when a live record exists already: on PostgreSQL the insert waits for a concurrent holder of the
 * key to commit, so the loser sees its record and the events are never stored twice.
 */
export async function claimIdempotencyKey(trx: Kysely<Database>, projectId: string, key: string, response: StoredResponse): Promise<boolean> {
  const now = Date.now()
  const row = {
    project_id: projectId,
    key,
    request_hash: UNUSED_REQUEST_HASH,
    status_code: response.statusCode,
    response_body: response.body,
    created_at: now,
  }
  const claimed = await trx
    .insertInto('idempotency_keys')
    .values(row)
    .onConflict((conflict) =>
      conflict
        .columns(['project_id', 'key'])
        .doUpdateSet({ status_code: response.statusCode, response_body: response.body, created_at: now })
        .where('idempotency_keys.created_at', '<=', now - IDEMPOTENCY_RETENTION_MS),
    )
    .returning('key')
    .executeTakeFirst()
  return claimed !== undefined
}

/** Sets the response of a key claimed earlier in `trx`, once the answer is known (a capture's group, say). */
export async function setStoredResponse(trx: Kysely<Database>, projectId: string, key: string, response: StoredResponse): Promise<void> {
  await trx
    .updateTable('idempotency_keys')
    .set({ status_code: response.statusCode, response_body: response.body })
    .where('project_id', '=', projectId)
    .where('key', '=', key)
    .execute()
}
