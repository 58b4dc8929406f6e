import { Type } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { PortalContext } from '../context.ts'

const CHECK_TIMEOUT_MS = 2000
/**
 * How long one check's result answers every health call after the check started: load balancers may
 * call as often as they like, the database still sees one committed probe a second at most, and a
 * failure shows within a second.
 */
export const CHECK_REUSE_MS = 1000

const Check = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('failing')]),
  latencyMs: Type.Number(),
  error: Type.Optional(Type.String({ description: 'why the check failed; never a secret or a connection string' })),
})

const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  checks: Type.Object({
    database: Check,
    authorization: Check,
    identityProvider: Type.Optional(Check),
  }),
})

export const healthRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  const checkDatabase = sharedCheck(() => ctx.storage.ping())
  const checkAuthorization = sharedCheck(() => ctx.storage.db.selectFrom('access_tokens').select('id').limit(1).execute())
  const checkIdentityProvider = ctx.oidc && sharedCheck(() => ctx.oidc!.checkReachable())
  app.get(
    '/api/health',
    {
      config: { access: 'public' },
      // Load balancers call it every few seconds, and an attacker as often as it likes: two log lines a call would be noise and cost.
      logLevel: 'warn',
      schema: {
        tags: ['health'],
        summary: 'Whether the portal can write to its database (one row committed, at most once a second: calls within that second share the result) and reach its authorisation service: the token store, and the OIDC issuer’s JWKS when AUTH_JWKS_URL is set',
        security: [],
        response: {
          200: { ...Health, description: 'Every check passed' },
          503: { ...Health, description: 'A check failed; `checks` names it' },
        },
      },
    },
    async (_request, reply) => {
      // At once, so that health answers within one check's time limit even when every check hangs.
      const [database, authorization, identityProvider] = await Promise.all([checkDatabase(), checkAuthorization(), checkIdentityProvider?.()])
      const checks = { database, authorization, ...(identityProvider && { identityProvider }) }
      const ok = Object.values(checks).every((check) => check.status === 'ok')
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', checks })
    },
  )
}

type CheckResult = Awaited<ReturnType<typeof timedCheck>>

/** A check run at most once per CHECK_REUSE_MS; calls meanwhile share the one in flight or its result. */
function sharedCheck(run: () => Promise<unknown>): () => Promise<CheckResult> {
  let latest: { result: CheckResult; startedAt: number } | undefined
  let inFlight: Promise<CheckResult> | undefined
  return () => {
    if (latest && performance.now() - latest.startedAt < CHECK_REUSE_MS) return Promise.resolve(latest.result)
    if (inFlight) return inFlight
    const startedAt = performance.now()
    inFlight = timedCheck(run).then((result) => {
      latest = { result, startedAt }
      inFlight = undefined
      return result
    })
    return inFlight
  }
}

async function timedCheck(run: () => Promise<unknown>) {
  const started = performance.now()
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      run(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS)
      }),
    ])
    return { status: 'ok' as const, latencyMs: elapsed(started) }
  } catch (error) {
    return { status: 'failing' as const, latencyMs: elapsed(started), error: describe(error) }
  } finally {
    clearTimeout(timer)
  }
}

function elapsed(started: number) {
  return Math.round((performance.now() - started) * 100) / 100
}

// Driver messages can carry a connection string; keep the code and the first words only.
function describe(error: unknown): string {
  const code = (error as { code?: unknown })?.code
  const message = error instanceof Error ? error.message.replace(/\w+:\/\/\S+/g, '<url>').slice(0, 200) : 'unknown error'
  return code ? `${String(code)}: ${message}` : message
}
