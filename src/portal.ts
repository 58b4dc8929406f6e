import pino, { type Logger } from 'pino'
import type { FastifyRequest } from 'fastify'
import type { Config } from './config.ts'
import type { PortalContext } from './context.ts'
import { bootstrapAdmin } from './identity/store.ts'
import { createOidcVerifier } from './identity/oidc.ts'
import { ApiKeyPrincipalCache } from './http/auth.ts'
import { bothChannels, redisInvalidations } from './invalidation/redis-channel.ts'
import { createSecretBox, loadServerKey } from './identity/secrets.ts'
import { createMemoryRateLimiter } from './ingest/rate-limit.ts'
import { connectRedisRateLimiter } from './ingest/redis-rate-limit.ts'
import { modules } from './modules/registry.ts'
import { startRetentionJob, type RetentionJob } from './retention/job.ts'
import { buildServer, type PortalServer } from './server.ts'
import { coreMigrations, migrate } from './storage/migrations.ts'
import { openStorage, type Storage } from './storage/storage.ts'
import { storageOptions } from './storage-options.ts'
import { listenStartupError, requireWritableFolder } from './startup.ts'
import { webhookNotifications } from './webhooks/enqueue.ts'
import { alertMigrations } from './alerts/migrations.ts'
import { startAlerting } from './alerts/evaluator.ts'
import { withAlertTriggers } from './alerts/triggers.ts'

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
  await migrate(storage, [...allMigrations, ...storage.layoutMigrations])
  return storage
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
}

/** Opens storage, migrates, bootstraps identity and listens: what `portal serve` and the tests run. */
export async function startPortal(config: Config, log: Logger = createLogger(config), options: StartOptions = {}): Promise<RunningPortal> {
  // The key file lives in the data folder: refused there, a start says so before it opens anything.
  if (config.secretKey === undefined) requireWritableFolder(config.dataDir, 'PORTAL_DATA_DIR')
  const storage = await openMigratedStorage(config, { log })
  const firstAdminToken = await bootstrapAdmin(storage.db, config.bootstrapToken)
  const rateLimiter = config.redisUrl
    ? await connectRedisRateLimiter(config.redisUrl, config.ingest.batchesPerSecond, log, config.redisTimeoutMs, config.startupWaitMs).catch(async (error: unknown) => {
        await storage.close()
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
    log,
    oidc: config.oidc && createOidcVerifier(config.oidc, storage.db),
  }
  const app = await buildServer(ctx)
  options.beforeListen?.(app)
  const stops = await Promise.all(modules.map((module) => module.start?.(ctx)))
  const closeAll = async () => {
    await app.close()
    for (const stop of stops) await stop?.()
    await rateLimiter.close()
    ctx.apiKeyPrincipals.close()
    if (invalidations !== storage.invalidations) await invalidations.close()
    await storage.close()
  }
  let address: string
  try {
    address = await app.listen({ port: config.port, host: config.host })
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
