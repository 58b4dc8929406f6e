import type { Kysely } from 'kysely'
import type { FastifyReply } from 'fastify'
import type { Database } from '../storage/tables.ts'
import { ProblemError } from '../http/problem.ts'

export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export interface StoredResponse {
  statusCode: number
  body: string
}

/** The `X-Service-Idempotency-Key` header, checked to be a UUID; undefined when absent. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  if (typeof header !== 'string' || !UUID.test(header)) {
    throw new ProblemError(400, 'invalid_idempotency_key', 'X-Service-Idempotency-Key: must be a UUID')
  }
  return header.toLowerCase()
}

/**
 * The response first given for this key within 24 hours, or undefined. The same key with another
 * body is refused: replaying the first answer to a different batch would hide the second's events.
 */
export async function findStoredResponse(db: Kysely<Database>, projectId: string, key: string, requestHash: string): Promise<StoredResponse | undefined> {
  const row = await db
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'status_code', 'response_body'])
    .where('project_id', '=', projectId)
    .where('key', '=', key)
    .where('created_at', '>', Date.now() - IDEMPOTENCY_RETENTION_MS)
    .executeTakeFirst()
  if (!row) return undefined
  if (row.request_hash !== requestHash) {
    throw new ProblemError(422, 'idempotency_key_reused', 'X-Service-Idempotency-Key: was already used within 24 hours for a different body')
  }
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
export async function claimIdempotencyKey(trx: Kysely<Database>, projectId: string, key: string, requestHash: string, response: StoredResponse): Promise<boolean> {
  const now = Date.now()
  const row = {
    project_id: projectId,
    key,
    request_hash: requestHash,
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
        .doUpdateSet({ request_hash: requestHash, status_code: response.statusCode, response_body: response.body, created_at: now })
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
