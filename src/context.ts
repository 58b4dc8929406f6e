import type { FastifyBaseLogger } from 'fastify'
import type { Config } from './config.ts'
import type { Notifications } from './notifications.ts'
import type { Storage } from './storage/storage.ts'
import type { Connection } from './storage/tables.ts'

/**
 * What every part of the portal is handed at start: read once, shared, never global. It declares the small
 * interfaces it hands out and the features implement them, so that the context depends on no feature
 * (test/architecture.test.ts).
 */
export interface PortalContext {
  config: Config
  storage: Storage
  secretBox: SecretBox
  rateLimiter: IngestRateLimiter
  apiKeyPrincipals: ApiKeyPrincipals
  notifications: Notifications
  /** every event module's table, in registry order: handed over so that a count of all events (tenants.limit_used) need not import the registry that lists its module */
  eventTables: readonly string[]
  /** set when AUTH_JWKS_URL is: OIDC bearer JWTs are accepted beside access tokens */
  oidc: OidcVerifier | undefined
  log: FastifyBaseLogger
}

/**
 * What the write path needs (`writeEvents`, a module's `afterWrite`): all that the ingest writer's thread
 * has (src/ingest/ingest-writer.ts), where `forget` tells the event loop's thread to forget its principals.
 */
export type WriteContext = Pick<PortalContext, 'storage' | 'notifications'> & { apiKeyPrincipals: Pick<ApiKeyPrincipals, 'forget'> }

/** Encrypts secrets that must be usable in clear later (HMAC keys) under the server key (src/identity/secrets.ts). */
export interface SecretBox {
  seal(plaintext: string): string
  open(sealed: string): string
}

/** The ingest rate limits of every project, in this process or shared through Redis (src/ingest/rate-limit.ts). */
export interface IngestRateLimiter {
  take(projectId: string, events: number, eventsPerSecond: number): Promise<RateDecision>
  close(): Promise<void>
}

/**
 * The decision on one ingest batch, with its reason: which bucket refused it and when it will admit
 * it. Buckets hold one second's allowance; a batch larger than that is admitted when its bucket is
 * full and leaves the bucket in debt, so no batch is refused forever.
 */
export interface RateDecision {
  allowed: boolean
  /** the bucket that refused the batch; when admitted, the one closer to refusing (less of it left) */
  bucket: 'events' | 'batches'
  limit: number
  remaining: number
  /** seconds until the reported bucket is full again */
  resetSeconds: number
  /** seconds until this batch would be admitted; 0 when admitted */
  retryAfterSeconds: number
  /** for how many ms, after this decision, a bucket stays below one token, so that any batch with an event is refused */
  emptyForMs: number
  /** that bucket, and its limit */
  empty?: { bucket: 'events' | 'batches'; limit: number }
  /** which limiter decided: `redis` shared across instances, or `memory` in this process */
  source: 'memory' | 'redis'
}

/** API-key principals of recent requests, by key hash: src/http/auth.ts keeps and reads them, and alone knows their shape. */
export interface ApiKeyPrincipals {
  lookup(keyHash: string, load: () => Promise<object | undefined>): Promise<object | undefined>
  /** after changing a key, a project or its ingest limit; inside `trx`, the other portals forget once it commits */
  forget(trx?: Connection): Promise<void>
  close(): void
}

/** Verifies OIDC bearer JWTs and checks that their issuer is reachable (src/identity/oidc.ts). */
export interface OidcVerifier {
  verify(token: string): Promise<OidcIdentity>
  checkReachable(): Promise<void>
}

export interface OidcIdentity {
  subject: string
  orgId: string
  role: 'admin' | 'viewer'
}
