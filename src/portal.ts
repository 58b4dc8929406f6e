import pino, { type Logger } from 'pino'
import type { FastifyRequest } from 'fastify'
import type { Config } from './config.ts'
import type { PortalContext } from './context.ts'
import { bootstrapAdmin } from './identity/store.ts'
import { createOidcVerifier } from './identity/oidc.ts'
import { ApiKeyPrincipalCache } from './http/auth.ts'
import { LISTEN_BACKLOG } from './http/connections.ts'
import { bothChannels, redisInvalidations } from './invalidation/redis-channel.ts'
import { createSecretBox, loadServerKey } from './identity/secrets.ts'
import { createMemoryRateLimiter } from './ingest/rate-limit.ts'
import { connectRedisRateLimiter } from './ingest/redis-rate-limit.ts'
import { modules } from './modules/registry.ts'
import { startRetentionJob, type RetentionJob } from './retention/job.ts'
import { buildServer, type PortalServer } from './server.ts'
import { coreMigrations, migrate } from './storage/migrations.ts'
import { isUnavailableAtOpen, openStorage } from './storage/open-storage.ts'
import type { Storage } from './storage/storage.ts'
import { listenDuringOutage, OPEN_RETRY_SECONDS } from './health/outage-server.ts'
import { describeError } from './health/routes.ts'
import { storageOptions } from './storage-options.ts'
import { listenStartupError, requireWritableFolder, StartupError } from './startup.ts'
import { webhookNotifications } from './webhooks/enqueue.ts'
import { alertMigrations } from './alerts/migrations.ts'
import { startAlerting } from './alerts/evaluator.ts'
import { withAlertTriggers } from './alerts/triggers.ts'
import { trackEventOutbox } from './metrics/metrics.ts'
import type { OutboxState } from './storage/event-store.ts'

/** Log lines held while standard output cannot be written; more are dropped. */
const MAX_UNWRITTEN_LOG_BYTES = 16 * 1024 * 1024

export const allMigrations = [...coreMigrations, ...modules.flatMap((module) => module.migrations), ...alertMigrations]

// A query parameter whose name says it is a credential, or whose value is one of ours by its prefix.
// A bare `key` (the flags filter) is not one by its name; a pk_… value in it still is by its prefix.
const CREDENTIAL_NAME = /token|secret|password|signature|auth|api_?key|access_?key|sentry_?key/i
const CREDENTIAL_VALUE = /^(pat|pk|whsec)_/

/**
 * The request URL as logged. Credentials belong in headers, which are never logged, but a client
 * may put one in a query string (`?token=…`, `?api_key=…`); its value is replaced, the rest kept as sent.
 */
function withoutQueryCredentials(url: string): string {
  return url.replace(/([?&])([^=&#]*)=([^&#]*)/g, (whole, separator: string, name: string, value: string) => {
    let decoded = value
    try {
      decoded = decodeURIComponent(value)
    } catch {
      // a malformed escape is logged as sent, unless its name says it is a credential
    }
    return CREDENTIAL_NAME.test(name) || CREDENTIAL_VALUE.test(decoded) ? `${separator}${name}=[redacted]` : whole
  })
}

export function createLogger(config: Config, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level: config.logLevel,
      serializers: {
        // Fastify's own request serializer, but with query-string credentials removed from the URL
        req: (request: FastifyRequest) => ({
          method: request.method,
          url: withoutQueryCredentials(request.url),
          host: request.host,
          remoteAddress: request.ip,
          remotePort: request.socket?.remotePort,
        }),
      },
      // Belt and braces: request logs carry no headers, but nothing with a credential may reach a log.
      redact: { paths: ['req.headers.authorization', 'req.headers["x-service-signature"]', '*.secret', '*.webhookSecret', '*.key', '*.token'], censor: '[redacted]' },
    },
    (destination as pino.DestinationStream | undefined) ?? standardOutput(),
  )
}

/**
 * Standard output as pino writes it, except that a failed write does not end the process: with stdout
 * redirected to a file on a full disk, the portal keeps answering (503s) and writes the held lines once
 * the disk has room again.
 */
function standardOutput(): pino.DestinationStream {
  const stream = pino.destination({ dest: 1, sync: true, maxLength: MAX_UNWRITTEN_LOG_BYTES })
  stream.on('error', () => {})
  return stream
}

/**
 * Opens the database and migrates it. `stateOnly` leaves the event store out: the CLI's commands touch state
 * alone, and run beside a serving portal, whose process alone may open events.duckdb.
 */
export async function openMigratedStorage(config: Config, { stateOnly = false, log }: { stateOnly?: boolean; log?: Logger } = {}): Promise<Storage> {
  const options = { ...storageOptions(config), onStartupWait: (message: string) => (log ? log.warn(message) : console.error(`portal: ${message}`)) }
  const storage = await openStorage(config.databaseUrl, stateOnly ? { ...options, columnarTables: [] } : options)
  try {
    await migrate(storage, [...allMigrations, ...storage.layoutMigrations])
  } catch (error) {
    // closed, so that a later try (a start waiting out a full disk) can open the files again
    await storage.close().catch(() => {})
    throw error
  }
  return storage
}

/**
 * Applies what the event outbox holds (a crash's leftovers) before the portal serves, so that health says ok only
 * then; while the event store cannot be written (a full disk) the portal starts without it, and health says why.
 * Each outage and each recovery is logged, and counted in /metrics.
 */
async function startEventOutbox(storage: Storage, log: Logger): Promise<() => void> {
  const outbox = storage.eventOutbox
  if (!outbox) return () => {}
  let reported: OutboxState | undefined
  const report = (state: OutboxState) => {
    if (state.unavailable) {
      log.warn(
        { reason: state.unavailable, backlogEvents: state.backlogEvents },
        'event store unavailable: ingest goes on into the outbox up to EVENT_OUTBOX_MAX_EVENTS, reads of events waiting there answer 503; retrying',
      )
    } else {
      const reopened = state.reopens > (reported?.reopens ?? 0)
      log.info({ backlogEvents: state.backlogEvents, reopens: state.reopens }, reopened ? 'event store reopened without a restart, and available again' : 'event store available again')
    }
    reported = state
  }
  const unwatch = outbox.watch(report)
  const untrack = trackEventOutbox(outbox)
  try {
    await outbox.ready()
  } catch (error) {
    if (!storage.isUnavailable(error)) {
      unwatch()
      untrack()
      throw error
    }
  }
  const state = outbox.state()
  if (state.unavailable && !reported?.unavailable) report(state)
  return () => {
    unwatch()
    untrack()
  }
}

/** A clean stop's: the whole outbox applied to the event store within SHUTDOWN_TIMEOUT_SECONDS, or what is left said. */
async function drainEventOutbox(storage: Storage, timeoutMs: number, log: Logger) {
  if (!storage.eventOutbox) return
  const left = await storage.eventOutbox.drain(timeoutMs)
  if (left.backlogRows === 0) return log.info('event outbox applied to the event store')
  log.warn(
    { backlogEvents: left.backlogEvents, backlogRows: left.backlogRows, reason: left.unavailable, timeoutSeconds: timeoutMs / 1000 },
    'stopping with events still in the outbox (SHUTDOWN_TIMEOUT_SECONDS): they are durable in the state database, and the next start applies them',
  )
}

export interface RunningPortal {
  app: PortalServer
  ctx: PortalContext
  url: string
  /** an admin token made on first start of an empty database, to be shown once */
  firstAdminToken: string | undefined
  /** the background retention job (docs/retention.md) */
  retention: RetentionJob
  close(): Promise<void>
}

export interface StartOptions {
  /** called with the built app before it listens: the tests add their response checks here */
  beforeListen?: (app: PortalServer) => void
  /** called once the app is ready, just before it listens: the stand-in of a start through an outage gives up the address */
  whenReady?: () => Promise<void>
}

/** What `startPortal` builds over the opened storage before it listens. */
async function openServer(config: Config, log: Logger, storage: Storage) {
  const unwatchOutbox = await startEventOutbox(storage, log)
  const firstAdminToken = await bootstrapAdmin(storage.db, config.bootstrapToken).catch((error: unknown) => {
    unwatchOutbox()
    throw error
  })
  const rateLimiter = config.redisUrl
    ? await connectRedisRateLimiter(config.redisUrl, config.ingest.batchesPerSecond, log, config.redisTimeoutMs, config.startupWaitMs).catch((error: unknown) => {
        unwatchOutbox()
        throw error
      })
    : createMemoryRateLimiter(config.ingest.batchesPerSecond)
  const invalidations = config.redisUrl ? bothChannels(storage.invalidations, redisInvalidations(config.redisUrl, config.redisTimeoutMs)) : storage.invalidations
  const notifications = withAlertTriggers(webhookNotifications({ attempts: config.webhooks.retrySchedule.length + 1, parseJson: storage.parseJson }))
  const ctx: PortalContext = {
    config,
    storage,
    secretBox: createSecretBox(loadServerKey(config.secretKey, config.dataDir)),
    rateLimiter,
    apiKeyPrincipals: new ApiKeyPrincipalCache(invalidations),
    notifications,
    eventTables: modules.map((module) => module.table),
    log,
    oidc: config.oidc && createOidcVerifier(config.oidc, storage.db),
  }
  try {
    return { unwatchOutbox, firstAdminToken, rateLimiter, invalidations, ctx, app: await buildServer(ctx) }
  } catch (error) {
    unwatchOutbox()
    ctx.apiKeyPrincipals.close()
    await rateLimiter.close()
    if (invalidations !== storage.invalidations) await invalidations.close()
    throw error
  }
}

/** Opens storage, migrates, bootstraps identity and listens: what `portal serve` and the tests run. */
export async function startPortal(config: Config, log: Logger = createLogger(config), options: StartOptions = {}): Promise<RunningPortal> {
  // The key file lives in the data folder: refused there, a start says so before it opens anything.
  if (config.secretKey === undefined) requireWritableFolder(config.dataDir, 'PORTAL_DATA_DIR')
  const storage = await openMigratedStorage(config, { log })
  const opening = await openServer(config, log, storage).catch(async (error: unknown) => {
    // closed, so that `startPortalThroughOutage` can open the files again
    await storage.close().catch(() => {})
    throw error
  })
  const { unwatchOutbox, firstAdminToken, rateLimiter, invalidations, ctx, app } = opening
  const stops = await Promise.all(modules.map((module) => module.start?.(ctx)))
  const closeAll = async () => {
    await app.close()
    for (const stop of stops) await stop?.()
    await drainEventOutbox(storage, config.shutdownTimeoutMs, log)
    unwatchOutbox()
    await rateLimiter.close()
    ctx.apiKeyPrincipals.close()
    if (invalidations !== storage.invalidations) await invalidations.close()
    await storage.close()
  }
  options.beforeListen?.(app)
  await app.ready()
  await options.whenReady?.()
  let address: string
  try {
    address = await app.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG })
  } catch (error) {
    await closeAll()
    throw listenStartupError(error, config.host, config.port)
  }

  const retention = startRetentionJob(ctx)
  const stopAlerting = startAlerting(ctx)

  return {
    app,
    ctx,
    url: address.replace('0.0.0.0', '127.0.0.1'),
    firstAdminToken,
    retention,
    async close() {
      await retention.stop()
      await stopAlerting()
      await closeAll()
    },
  }
}

/**
 * `startPortal` for `portal serve`: a database that cannot be opened because of an outage (a full disk, where SQLite
 * cannot make its shared-memory file; PostgreSQL down) does not end the process. Until it can be, a stand-in answers
 * on the portal's address (health 503 with the reason, everything else 503 `database_unavailable`), and the opening is
 * tried again every OPEN_RETRY_SECONDS. Resolves to undefined when `stopping` aborts first.
 */
export async function startPortalThroughOutage(config: Config, log: Logger, stopping: AbortSignal): Promise<RunningPortal | undefined> {
  let standIn: { close(): Promise<void> } | undefined
  let reason = ''
  // The stand-in answers until the portal is about to listen on the same address, so that clients meet no refused connection.
  const closeStandIn = async () => {
    if (!standIn) return
    await standIn.close()
    standIn = undefined
    log.info('the database opens again: the portal takes over from the stand-in')
  }
  try {
    for (;;) {
      try {
        return await startPortal(config, log, { whenReady: closeStandIn })
      } catch (error) {
        // An operator's mistake (no such database, a folder it may not write) is said in one line; an outage is ridden out.
        if (error instanceof StartupError || !(await isUnavailableAtOpen(config.databaseUrl, error))) throw error
        reason = describeError(error)
        if (!standIn) {
          log.warn({ reason }, `the database cannot be opened: health and every request answer 503 while it is tried again every ${OPEN_RETRY_SECONDS} s`)
          standIn = await listenDuringOutage(config.host, config.port, () => reason)
        }
      }
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, OPEN_RETRY_SECONDS * 1000)
        stopping.addEventListener('abort', () => resolve(clearTimeout(timer)), { once: true })
      })
      if (stopping.aborted) return undefined
    }
  } finally {
    await standIn?.close()
  }
}
