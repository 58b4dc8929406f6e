import fp from 'fastify-plugin'
import type { FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { ApiKeyPrincipals, PortalContext } from '../context.ts'
import { OidcRefusal, OidcUnavailable } from '../identity/oidc.ts'
import { sha256Hex } from '../identity/secrets.ts'
import { parseScopes, type KeyScope } from '../projects/key-scopes.ts'
import { precompiled, type InvalidationChannel } from '../storage/storage.ts'
import type { Database } from '../storage/tables.ts'
import { ProblemError } from './problem.ts'
import type { Connection } from '../storage/tables.ts'

/**
 * Who may call a route, declared in its `config.access`:
 * - `public`: anyone (health);
 * - `any`: any valid access token or API key (the OpenAPI document);
 * - `read`: an access token of either role;
 * - `admin`: an admin access token;
 * - `apiKey`: a project API key (ingest, error capture).
 */
export type Access = 'public' | 'any' | 'read' | 'admin' | 'apiKey'

export type Principal =
  | { kind: 'accessToken'; tokenId: string; orgId: string; role: 'admin' | 'viewer'; name: string }
  | {
      kind: 'apiKey'
      keyId: string
      orgId: string
      projectId: string
      webhookSecretEncrypted: string
      projectEventsPerSecond: number | null
      /** the protocols the key was created for */
      scopes: KeyScope[]
      /** the project's number, as Sentry's DSN names it */
      projectNumber: number | null
    }

type ApiKeyPrincipal = Extract<Principal, { kind: 'apiKey' }>

/**
 * How long an API key's principal is used without a lookup: how late another portal sees a revocation
 * when the invalidation channel has lost its message (it is down, or reconnecting).
 */
export const API_KEY_CACHE_MS = 1_000
const MAX_CACHED_API_KEYS = 10_000
const INVALIDATION_TOPIC = 'api-key-principals'

/**
 * API-key principals by key hash, kept for API_KEY_CACHE_MS after their lookup. Every ingest batch and
 * error capture authenticates with a key, and on SQLite the lookup waits for the one connection behind
 * the transaction being committed. A portal that revokes a key, deletes a project or changes its ingest
 * limit calls `forget`: it forgets at once, and every portal sharing the database forgets when the
 * message on `channel` reaches it (milliseconds after the commit), or at the latest when entries expire.
 * Unknown keys are never kept, so a new key works at once.
 */
export class ApiKeyPrincipalCache implements ApiKeyPrincipals {
  private readonly entries = new Map<string, { principal: ApiKeyPrincipal; expiresAt: number }>()
  /** Moves on every forget: a lookup that a forget overtook may have read what was forgotten. */
  private generation = 0
  private readonly unsubscribe: () => void

  constructor(
    private readonly channel: InvalidationChannel,
    private readonly ttlMs = API_KEY_CACHE_MS,
  ) {
    this.unsubscribe = channel.subscribe(() => this.forgetHere())
  }

  async lookup(keyHash: string, load: () => Promise<ApiKeyPrincipal | undefined>): Promise<ApiKeyPrincipal | undefined> {
    const startedAt = Date.now()
    const cached = this.entries.get(keyHash)
    if (cached && cached.expiresAt > startedAt) return cached.principal
    const generation = this.generation
    const principal = await load()
    if (principal && generation === this.generation) {
      if (this.entries.size >= MAX_CACHED_API_KEYS) this.entries.clear()
      this.entries.set(keyHash, { principal, expiresAt: startedAt + this.ttlMs })
    }
    return principal
  }

  /**
   * Drops every kept principal here and tells the other portals to; called when a key, its project or
   * the project's limit changes. Inside `trx` the others hear it once `trx` commits (and so does this
   * portal again, for a lookup that read the old row before the commit).
   */
  async forget(trx?: Connection): Promise<void> {
    this.forgetHere()
    await this.channel.publish(INVALIDATION_TOPIC, trx)
  }

  close(): void {
    this.unsubscribe()
  }

  private forgetHere(): void {
    this.generation++
    this.entries.clear()
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access
    /** for `apiKey` routes: the scope the key needs (default `ingest`) */
    keyScope?: KeyScope
    /**
     * where the credential is read: the Authorization bearer (default); or also Sentry's `X-Sentry-Auth` / `?sentry_key=`;
     * or also HTTP Basic's password (`basic`: the query APIs, for clients that speak only Basic, such as promtool's `http://user:token@host`)
     */
    credentials?: 'bearer' | 'sentry' | 'basic'
  }
  interface FastifyRequest {
    principal: Principal | null
  }
}

const LAST_USED_WRITE_INTERVAL_MS = 60_000

export const authPlugin = fp<{ ctx: PortalContext }>(async (app, { ctx }) => {
  const lastUsedWritten = new Map<string, number>()
  const lookups = credentialLookups(ctx.storage.db)
  app.decorateRequest('principal', null)

  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config?.access ?? 'admin'
    if (access === 'public' || request.routeOptions.url === undefined) return
    const principal = await resolvePrincipal(ctx, lookups, request)
    assertAllowed(principal, access, request.routeOptions.config?.keyScope ?? 'ingest')
    request.principal = principal
    noteLastUsed(principal)
  })

  // Written at most once a minute per credential, after the answer, so that reads never wait on a write.
  function noteLastUsed(principal: Principal) {
    const id = principal.kind === 'apiKey' ? principal.keyId : principal.tokenId
    const now = Date.now()
    if (now - (lastUsedWritten.get(id) ?? 0) < LAST_USED_WRITE_INTERVAL_MS) return
    lastUsedWritten.set(id, now)
    const table = principal.kind === 'apiKey' ? 'api_keys' : 'access_tokens'
    ctx.storage.db
      .updateTable(table)
      .set({ last_used_at: now })
      .where('id', '=', id)
      .execute()
      .catch((error) => ctx.log.warn({ err: error }, 'could not record last use of a credential'))
  }
})

/** The two lookups every authenticated request makes, by the SHA-256 of its token. */
function credentialLookups(db: Kysely<Database>) {
  return {
    apiKey: precompiled(
      db,
      (hash: string) =>
        db
          .selectFrom('api_keys')
          .innerJoin('projects', 'projects.id', 'api_keys.project_id')
          .select([
            'api_keys.id as keyId',
            'api_keys.webhook_secret_encrypted as webhookSecretEncrypted',
            'projects.id as projectId',
            'projects.org_id as orgId',
            'projects.ingest_events_per_second as projectEventsPerSecond',
            'projects.number as projectNumber',
            'api_keys.scopes as scopes',
          ])
          .where('api_keys.key_hash', '=', hash)
          .where('api_keys.revoked_at', 'is', null)
          .where('projects.deleted_at', 'is', null),
      [''],
    ),
    accessToken: precompiled(
      db,
      (hash: string) =>
        db.selectFrom('access_tokens').select(['id as tokenId', 'org_id as orgId', 'role', 'name']).where('token_hash', '=', hash).where('revoked_at', 'is', null),
      [''],
    ),
  }
}

type CredentialLookups = ReturnType<typeof credentialLookups>

async function resolvePrincipal(ctx: PortalContext, lookups: CredentialLookups, request: FastifyRequest): Promise<Principal> {
  const credentials = request.routeOptions.config?.credentials
  const token = credentials === 'sentry' ? (sentryKey(request) ?? bearerToken(request)) : credentials === 'basic' ? (bearerToken(request) ?? basicPassword(request)) : bearerToken(request)
  if (token === undefined) throw unauthorized('missing_token', 'Authorization: Bearer <token> is required')
  const hash = sha256Hex(token)
  if (token.startsWith('pk_')) {
    // The context keeps principals as objects of no shape (src/context.ts); only this function fills and reads them.
    const principal = (await ctx.apiKeyPrincipals.lookup(hash, async (): Promise<ApiKeyPrincipal | undefined> => {
      const [row] = await lookups.apiKey(hash)
      return row && { kind: 'apiKey', ...row, scopes: parseScopes(row.scopes) }
    })) as ApiKeyPrincipal | undefined
    if (principal) return principal
  } else if (token.startsWith('pat_')) {
    const [row] = await lookups.accessToken(hash)
    if (row) return { kind: 'accessToken', ...row }
  } else if (ctx.oidc && token.split('.').length === 3) {
    return oidcPrincipal(ctx.oidc, token)
  }
  throw unauthorized('invalid_token', 'the bearer token is unknown, revoked, or belongs to a deleted project')
}

function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null
  return match?.[1]
}

/** The password of `Authorization: Basic base64(user:password)`; the user name is not read. */
function basicPassword(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  const match = typeof header === 'string' ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null
  if (!match) return undefined
  const decoded = Buffer.from(match[1], 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  return colon === -1 || colon === decoded.length - 1 ? undefined : decoded.slice(colon + 1)
}

/** Sentry SDKs send the DSN's key in `X-Sentry-Auth: Sentry sentry_key=…, …` or, from browsers, as `?sentry_key=`. */
function sentryKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-sentry-auth']
  const fromHeader = typeof header === 'string' ? /(?:^|[\s,])sentry_key=([^\s,]+)/.exec(header)?.[1] : undefined
  const query = request.query as Record<string, unknown> | undefined
  return fromHeader ?? (typeof query?.sentry_key === 'string' ? query.sentry_key : undefined)
}

async function oidcPrincipal(oidc: NonNullable<PortalContext['oidc']>, token: string): Promise<Principal> {
  try {
    const identity = await oidc.verify(token)
    return { kind: 'accessToken', tokenId: `oidc:${identity.subject}`, orgId: identity.orgId, role: identity.role, name: identity.subject }
  } catch (error) {
    if (error instanceof OidcRefusal) throw unauthorized('invalid_token', error.message)
    if (error instanceof OidcUnavailable) throw new ProblemError(503, 'authorization_unavailable', error.message, { 'retry-after': '5' })
    throw error
  }
}

function assertAllowed(principal: Principal, access: Access, keyScope: KeyScope) {
  if (access === 'any') return
  if (access === 'apiKey') {
    if (principal.kind !== 'apiKey') throw new ProblemError(403, 'api_key_required', 'this endpoint takes a project API key (pk_…), not an access token')
    if (!principal.scopes.includes(keyScope)) {
      throw new ProblemError(403, 'scope_required', `this API key was not created with the \`${keyScope}\` scope; create a key with scopes including "${keyScope}"`)
    }
    return
  }
  if (principal.kind === 'apiKey') {
    throw new ProblemError(403, 'access_token_required', 'API keys may only ingest; reads and management take an access token (pat_…)')
  }
  if (access === 'admin' && principal.role !== 'admin') {
    throw new ProblemError(403, 'admin_required', 'this action needs an admin access token; viewers may only read')
  }
}

function unauthorized(code: string, detail: string) {
  return new ProblemError(401, code, detail, { 'www-authenticate': 'Bearer' })
}

/** The access-token principal of a request whose route is `read` or `admin`. */
export function accessPrincipal(request: FastifyRequest) {
  const principal = request.principal
  if (principal?.kind !== 'accessToken') throw new Error('route reached without an access token; check its config.access')
  return principal
}
