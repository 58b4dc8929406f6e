import type { FastifyBaseLogger } from 'fastify'
import type { Config } from './config.ts'
import type { ApiKeyPrincipalCache } from './http/auth.ts'
import type { OidcVerifier } from './identity/oidc.ts'
import type { SecretBox } from './identity/secrets.ts'
import type { IngestRateLimiter } from './ingest/rate-limit.ts'
import type { Notifications } from './notifications.ts'
import type { Storage } from './storage/storage.ts'

/** What every part of the portal is handed at start: read once, shared, never global. */
export interface PortalContext {
  config: Config
  storage: Storage
  secretBox: SecretBox
  rateLimiter: IngestRateLimiter
  /** API-key principals of recent requests; `forget()` after changing a key, a project or its ingest limit */
  apiKeyPrincipals: ApiKeyPrincipalCache
  notifications: Notifications
  /** set when AUTH_JWKS_URL is: OIDC bearer JWTs are accepted beside access tokens */
  oidc: OidcVerifier | undefined
  log: FastifyBaseLogger
}

/**
 * What the write path needs (`writeEvents`, a module's `afterWrite`): all that the ingest writer's thread
 * has (src/ingest/ingest-writer.ts), where `forget` tells the event loop's thread to forget its principals.
 */
export type WriteContext = Pick<PortalContext, 'storage' | 'notifications'> & { apiKeyPrincipals: Pick<ApiKeyPrincipalCache, 'forget'> }
