import { Type } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { PortalContext } from '../context.ts'
import { named } from '../http/openapi-components.ts'
import type { OutboxState } from '../storage/event-store.ts'

const CHECK_TIMEOUT_MS = 2000
/**
 * How long one check's result answers every health call after the check started: load balancers may
 * call as often as they like, the database still sees one committed probe a second at most, and a
 * failure shows within a second.
 */
export const CHECK_REUSE_MS = 1000
/** What a 503 of health tells a client to wait: as long as the event store waits between two tries. */
const UNHEALTHY_RETRY_AFTER_SECONDS = 2

const Check = named('HealthCheck', Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('failing')]),
  latencyMs: Type.Number({ description: 'how long the check took' }),
  error: Type.Optional(Type.String({ description: 'why the check failed; never a secret or a connection string' })),
}, { description: 'One dependency’s check.' }))

const EventStoreCheck = named('EventStoreHealthCheck', Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('failing')]),
  latencyMs: Type.Number({ description: 'how long the check took (it reads the event store’s state in memory)' }),
  error: Type.Optional(Type.String({ description: 'why events cannot be applied or read: `no space left on device`, a database DuckDB invalidated and the portal is reopening, the outbox of the last run still being applied' })),
  outbox: Type.Object({
    events: Type.Integer({ description: 'acknowledged events in the outbox, not yet applied to the event store (counted every 250 ms)' }),
    batches: Type.Integer({ description: 'the outbox rows (one per module per ingest commit) holding them' }),
    maxEvents: Type.Integer({ description: 'EVENT_OUTBOX_MAX_EVENTS: past it ingest answers 503 until the outbox drains; 0, no bound' }),
  }),
  unavailableSince: Type.Optional(Type.String({ format: 'date-time', description: 'when events stopped being applied' })),
}, { description: 'The columnar event store (DuckDB on the embedded default) and the outbox that feeds it: failing while events cannot be applied to it or read from it.' }))

const Health = named('Health', Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  checks: Type.Object({
    database: Check,
    authorization: Check,
    eventStore: Type.Optional(EventStoreCheck),
    identityProvider: Type.Optional(Check),
  }, { description: 'one entry per dependency; `eventStore` where events live in a store of their own (DuckDB on the embedded default; on PostgreSQL they are the database’s), `identityProvider` when AUTH_JWKS_URL is set' }),
}, {
  description: 'The portal’s health and each check’s result.',
  examples: [{
    status: 'ok',
    checks: { database: { status: 'ok', latencyMs: 1.2 }, authorization: { status: 'ok', latencyMs: 0.4 }, eventStore: { status: 'ok', latencyMs: 0, outbox: { events: 1200, batches: 3, maxEvents: 1000000 } } },
  }],
}))

export const healthRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  const checkDatabase = sharedCheck(() => ctx.storage.ping())
  const checkAuthorization = sharedCheck(() => ctx.storage.db.selectFrom('access_tokens').select('id').limit(1).execute())
  const checkIdentityProvider = ctx.oidc && sharedCheck(() => ctx.oidc!.checkReachable())
  const outbox = ctx.storage.eventOutbox
  app.get(
    '/api/health',
    {
      config: { access: 'public' },
      // Load balancers call it every few seconds, and an attacker as often as it likes: two log lines a call would be noise and cost.
      logLevel: 'warn',
      schema: {
        operationId: 'getHealth',
        tags: ['health'],
        description: 'No bearer needed; answered even while the portal sheds load, so that load balancers can tell busy from dead. Each check has 2 s.',
        summary: 'Whether the portal can write to its database (one row committed, at most once a second: calls within that second share the result), apply events to its event store and read them (its outbox’s backlog), and reach its authorisation service: the token store, and the OIDC issuer’s JWKS when AUTH_JWKS_URL is set',
        security: [],
        response: {
          200: { description: 'Every check passed', content: { 'application/json': { schema: Health } } },
          503: {
            description: 'A check failed; `checks` names it',
            headers: { 'Retry-After': { type: 'integer', minimum: 0, description: 'seconds before the checks are worth asking again' } },
            content: {
              'application/json': {
                schema: Health,
                example: { status: 'unavailable', checks: { database: { status: 'failing', latencyMs: 2000, error: 'timed out after 2000 ms' }, authorization: { status: 'ok', latencyMs: 0.4 } } },
              },
            },
          },
        },
      },
    },
    async (_request, reply) => {
      // At once, so that health answers within one check's time limit even when every check hangs.
      const [database, authorization, identityProvider] = await Promise.all([checkDatabase(), checkAuthorization(), checkIdentityProvider?.()])
      const eventStore = outbox && checkEventStore(outbox.state(), ctx.config.eventOutboxMaxEvents)
      const checks = { database, authorization, ...(eventStore && { eventStore }), ...(identityProvider && { identityProvider }) }
      const ok = Object.values(checks).every((check) => check.status === 'ok')
      if (!ok) reply.header('retry-after', String(UNHEALTHY_RETRY_AFTER_SECONDS))
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', checks })
    },
  )
}

/** From the event store's state in memory: no query, so that health stays cheap however busy the store is. */
function checkEventStore(state: OutboxState, maxEvents: number) {
  const outbox = { events: state.backlogEvents, batches: state.backlogRows, maxEvents }
  const error = state.unavailable ?? (state.started ? undefined : 'the outbox left by the last run is still being applied')
  return {
    status: error ? ('failing' as const) : ('ok' as const),
    latencyMs: 0,
    ...(error && { error }),
    outbox,
    ...(state.unavailableSince !== undefined && { unavailableSince: new Date(state.unavailableSince).toISOString() }),
  }
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
    return { status: 'failing' as const, latencyMs: elapsed(started), error: describeError(error) }
  } finally {
    clearTimeout(timer)
  }
}

function elapsed(started: number) {
  return Math.round((performance.now() - started) * 100) / 100
}

/** A failure as health shows it. Driver messages can carry a connection string; the code and the first words only. */
export function describeError(error: unknown): string {
  const code = (error as { code?: unknown })?.code
  const message = error instanceof Error ? error.message.replace(/\w+:\/\/\S+/g, '<url>').slice(0, 200) : 'unknown error'
  return code ? `${String(code)}: ${message}` : message
}
