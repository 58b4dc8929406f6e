import path from 'node:path'

/** Every environment variable the portal reads, parsed and checked once, here. */
export interface Config {
  port: number
  host: string
  databaseUrl: string
  databasePoolSize: number
  /** how long a query waits for a free pool connection (SQLite: for its one connection) before the request is answered 503 `overloaded` */
  databasePoolWaitMs: number
  /** PostgreSQL: how long one query may go unanswered before it fails (a 503), so that a partition never hangs a request */
  databaseQueryTimeoutMs: number
  sqliteSynchronous: 'full' | 'normal'
  /**
   * SQLite only: `duckdb` keeps the log events in events.duckdb, fed through a SQLite outbox; `sqlite` as rows of
   * the SQLite database; unset, DuckDB unless the data folder already holds them as rows (docs/event-store.md)
   */
  eventStore: 'sqlite' | 'duckdb' | undefined
  /**
   * DuckDB event store only: acknowledged events waiting in the SQLite outbox to be applied to DuckDB, beyond which
   * ingest is answered 503 until the backlog drains (a full disk keeps it from draining); 0: no bound
   */
  eventOutboxMaxEvents: number
  /** how long a clean stop (SIGTERM) spends applying the event outbox to DuckDB before it exits anyway, saying what is left */
  shutdownTimeoutMs: number
  dataDir: string
  secretKey: string | undefined
  bootstrapToken: string | undefined
  redisUrl: string | undefined
  /** how long a start waits for a PostgreSQL or Redis that is not reachable yet (a container starting beside it) before it gives up */
  startupWaitMs: number
  /** how long a Redis command (a rate-limit decision, a published invalidation) may take before the portal carries on without Redis */
  redisTimeoutMs: number
  /** the bearer `GET /metrics` takes; without it the route is not served */
  metricsToken: string | undefined
  /** OIDC bearers, accepted beside access tokens when `jwksUrl` is set */
  oidc: { jwksUrl: string; issuer: string | undefined; audience: string | undefined; orgClaim: string; roleClaim: string } | undefined
  logLevel: string
  /** the base URL clients reach the portal at (PUBLIC_URL), for the DSN and OTLP endpoint it shows; else taken from the request */
  publicUrl: string | undefined
  /** which proxies' X-Forwarded-Proto/-Host/-For are believed (TRUST_PROXY): Fastify's trustProxy; false: none */
  trustProxy: boolean | number | string[]
  /** limits on client connections, so that no client can hold the process's descriptors or connections for ever */
  http: {
    /** open connections at most; `undefined`: derived from the process's descriptor limit at start */
    maxConnections: number | undefined
    /** from a connection's first byte (or its accept) until its request headers are complete */
    headersTimeoutMs: number
    /** from a request's first byte until its whole body has arrived */
    requestTimeoutMs: number
    /** an idle connection between two requests */
    keepAliveTimeoutMs: number
    /** requests of one connection handled at once; reading it stops meanwhile */
    maxPipelinedRequests: number
  }
  ingest: {
    eventsPerSecond: number
    batchesPerSecond: number
    maxBatchBytes: number
  }
  loadShedding: {
    maxEventLoopDelayMs: number
    /** events (a capture is one) accepted and not yet committed, per write path, beyond which writes are shed */
    maxPendingEvents: number
    retryAfterSeconds: number
  }
  webhooks: {
    retrySchedule: number[]
    timeoutMs: number
    allowPrivateNetworks: boolean
    rotationGraceSeconds: number
    /** attempts in flight at once in this process, and towards one endpoint */
    concurrency: number
    endpointConcurrency: number
    /** an endpoint whose every attempt failed for this long is disabled */
    disableAfterFailingSeconds: number
  }
  retention: {
    /** days an event type's rows are kept, by event type, unless a project says otherwise (docs/retention.md) */
    days: Record<string, number>
    /** days alert history is kept (RETENTION_DAYS_ALERTS), by default as long as audit events */
    alertHistoryDays: number
    /** how often the retention job runs */
    intervalSeconds: number
    /** rows one delete takes, each in its own short transaction */
    deleteBatchRows: number
  }
}

export class ConfigError extends Error {}

/**
 * An event type as configuration sees it: `RETENTION_DAYS_<TYPE>` sets how long its rows are kept. The start
 * passes the registry's modules in, so that configuration depends on no feature (test/architecture.test.ts).
 */
export interface RetainedEventType {
  type: string
  retention?: { defaultDays?: number }
}

type Env = Record<string, string | undefined>

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

export function loadConfig(eventTypes: readonly RetainedEventType[], env: Env = process.env): Config {
  const dataDir = path.resolve(text(env, 'PORTAL_DATA_DIR', './data'))
  return {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: text(env, 'HOST', '0.0.0.0'),
    databaseUrl: databaseUrl(env, dataDir),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    databasePoolWaitMs: integer(env, 'DATABASE_POOL_WAIT_MS', 5_000, 10, 600_000),
    databaseQueryTimeoutMs: integer(env, 'DATABASE_QUERY_TIMEOUT_MS', 15_000, 100, 3_600_000),
    sqliteSynchronous: oneOf(env, 'SQLITE_SYNCHRONOUS', 'full', ['full', 'normal']) as 'full' | 'normal',
    eventStore: eventStore(env),
    eventOutboxMaxEvents: integer(env, 'EVENT_OUTBOX_MAX_EVENTS', 1_000_000, 0, 1e9),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_SECONDS', 20, 0, 3600) * 1000,
    dataDir,
    secretKey: optional(env, 'PORTAL_SECRET_KEY'),
    bootstrapToken: bootstrapToken(env),
    redisUrl: redisUrl(env),
    redisTimeoutMs: integer(env, 'REDIS_TIMEOUT_MS', 500, 10, 60_000),
    startupWaitMs: integer(env, 'STARTUP_WAIT_SECONDS', 30, 0, 3600) * 1000,
    metricsToken: metricsToken(env),
    oidc: oidc(env),
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', LOG_LEVELS),
    publicUrl: publicUrl(env),
    trustProxy: trustProxy(env),
    http: httpLimits(env),
    ingest: {
      eventsPerSecond: integer(env, 'INGEST_RATE_LIMIT_EVENTS_PER_SECOND', 1000, 1, 1e9),
      batchesPerSecond: integer(env, 'INGEST_RATE_LIMIT_BATCHES_PER_SECOND', 100, 1, 1e9),
      maxBatchBytes: integer(env, 'INGEST_RATE_LIMIT_MAX_BATCH_BYTES', 5 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    },
    loadShedding: {
      maxEventLoopDelayMs: integer(env, 'LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS', 1000, 0, 60_000),
      maxPendingEvents: integer(env, 'LOAD_SHED_MAX_PENDING_EVENTS', 50_000, 0, 1e9),
      retryAfterSeconds: integer(env, 'LOAD_SHED_RETRY_AFTER_SECONDS', 1, 1, 3600),
    },
    webhooks: {
      retrySchedule: retrySchedule(env),
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 1, 600_000),
      allowPrivateNetworks: boolean(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
      rotationGraceSeconds: integer(env, 'WEBHOOK_ROTATION_GRACE_SECONDS', 86_400, 0, 365 * 86_400),
      concurrency: integer(env, 'WEBHOOK_CONCURRENCY', 256, 1, 10_000),
      endpointConcurrency: integer(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', 16, 1, 10_000),
      disableAfterFailingSeconds: integer(env, 'WEBHOOK_DISABLE_AFTER_FAILING_SECONDS', 5 * 86_400, 1, 365 * 86_400),
    },
    retention: {
      days: retentionDays(env, eventTypes),
      alertHistoryDays: integer(env, 'RETENTION_DAYS_ALERTS', retentionDays(env, eventTypes).audit ?? 365, 1, MAX_RETENTION_DAYS),
      intervalSeconds: integer(env, 'RETENTION_INTERVAL_SECONDS', 300, 1, 86_400),
      deleteBatchRows: integer(env, 'RETENTION_DELETE_BATCH_ROWS', 1000, 1, 100_000),
    },
  }
}

function optional(env: Env, name: string): string | undefined {
  const value = env[name]
  return value === undefined || value === '' ? undefined : value
}

function text(env: Env, name: string, fallback: string): string {
  return optional(env, name) ?? fallback
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, name)
  if (raw === undefined) return fallback
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`)
  const value = Number(raw)
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`)
  return value
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = optional(env, name)?.toLowerCase()
  if (raw === undefined) return fallback
  if (['true', '1', 'yes'].includes(raw)) return true
  if (['false', '0', 'no'].includes(raw)) return false
  throw new ConfigError(`${name} must be true or false, got "${raw}"`)
}

function oneOf(env: Env, name: string, fallback: string, allowed: string[]): string {
  const raw = text(env, name, fallback)
  if (!allowed.includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`)
  return raw
}

function eventStore(env: Env): 'sqlite' | 'duckdb' | undefined {
  return optional(env, 'EVENT_STORE') === undefined ? undefined : (oneOf(env, 'EVENT_STORE', '', ['sqlite', 'duckdb']) as 'sqlite' | 'duckdb')
}

function databaseUrl(env: Env, dataDir: string): string {
  const raw = optional(env, 'DATABASE_URL') ?? `sqlite:${path.join(dataDir, 'portal.db')}`
  if (raw.startsWith('sqlite:') && raw.length > 'sqlite:'.length) return raw
  if (/^postgres(ql)?:\/\/.+/.test(raw)) {
    try {
      new URL(raw)
      return raw
    } catch {
      // falls through to the error below
    }
  }
  throw new ConfigError('DATABASE_URL must be sqlite:<path> or postgres://user@host:port/database')
}

function redisUrl(env: Env): string | undefined {
  const raw = optional(env, 'REDIS_URL')
  if (raw === undefined) return undefined
  if (!/^rediss?:\/\/.+/.test(raw)) throw new ConfigError('REDIS_URL must be redis://host:port or rediss://host:port')
  return raw
}

function metricsToken(env: Env): string | undefined {
  const raw = optional(env, 'METRICS_TOKEN')
  if (raw === undefined) return undefined
  if (!/^[\x21-\x7e]{16,}$/.test(raw)) throw new ConfigError('METRICS_TOKEN must be at least 16 printable characters without spaces')
  return raw
}

function oidc(env: Env): Config['oidc'] {
  const jwksUrl = optional(env, 'AUTH_JWKS_URL')
  if (jwksUrl === undefined) return undefined
  if (!/^https?:\/\/.+/.test(jwksUrl)) throw new ConfigError(`AUTH_JWKS_URL must be an http(s) URL, got "${jwksUrl}"`)
  return {
    jwksUrl,
    issuer: optional(env, 'AUTH_JWT_ISSUER'),
    audience: optional(env, 'AUTH_JWT_AUDIENCE'),
    orgClaim: text(env, 'AUTH_JWT_ORG_CLAIM', 'org_id'),
    roleClaim: text(env, 'AUTH_JWT_ROLE_CLAIM', 'role'),
  }
}

function bootstrapToken(env: Env): string | undefined {
  const raw = optional(env, 'PORTAL_BOOTSTRAP_TOKEN')
  if (raw === undefined) return undefined
  if (!/^pat_[A-Za-z0-9_-]{16,}$/.test(raw)) {
    throw new ConfigError('PORTAL_BOOTSTRAP_TOKEN must look like pat_ followed by at least 16 letters, digits, - or _')
  }
  return raw
}

/** PUBLIC_URL: an http(s) URL without query or fragment; a path is kept (a proxy serving the portal under a prefix), its trailing slash dropped. */
function publicUrl(env: Env): string | undefined {
  const raw = optional(env, 'PUBLIC_URL')
  if (raw === undefined) return undefined
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an http(s) URL such as https://observe.example.com, got "${raw}"`)
  }
  if (!/^https?:$/.test(url.protocol) || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new ConfigError(`PUBLIC_URL must be an http(s) URL without credentials, query or fragment, got "${raw}"`)
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

/** TRUST_PROXY: `true` (every hop), a number of hops, or the proxies' addresses and CIDR ranges, comma-separated; default none. */
function trustProxy(env: Env): boolean | number | string[] {
  const raw = optional(env, 'TRUST_PROXY')?.trim()
  if (raw === undefined || /^(false|no|0)$/i.test(raw)) return false
  if (/^(true|yes)$/i.test(raw)) return true
  if (/^\d+$/.test(raw)) return Number(raw)
  const addresses = raw.split(',').map((part) => part.trim()).filter((part) => part !== '')
  if (addresses.some((address) => !/^[0-9a-fA-F.:]+(\/\d{1,3})?$/.test(address) && !['loopback', 'linklocal', 'uniquelocal'].includes(address))) {
    throw new ConfigError(`TRUST_PROXY must be true, a number of hops, or proxy addresses or CIDR ranges separated by commas, got "${raw}"`)
  }
  return addresses
}

function httpLimits(env: Env): Config['http'] {
  const headersTimeoutMs = integer(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 3_600_000)
  const requestTimeoutMs = integer(env, 'HTTP_REQUEST_TIMEOUT_MS', 60_000, 100, 3_600_000)
  // Node checks the headers' deadline only while the request's is still ahead.
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new ConfigError(`HTTP_REQUEST_TIMEOUT_MS must be at least HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs}), got ${requestTimeoutMs}`)
  }
  return {
    maxConnections: optional(env, 'HTTP_MAX_CONNECTIONS') === undefined ? undefined : integer(env, 'HTTP_MAX_CONNECTIONS', 0, 1, 10_000_000),
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 3_600_000),
    maxPipelinedRequests: integer(env, 'HTTP_MAX_PIPELINED_REQUESTS', 8, 1, 1024),
  }
}

function retrySchedule(env: Env): number[] {
  const raw = text(env, 'WEBHOOK_RETRY_SCHEDULE', '5,300,1800,7200,18000,36000,36000')
  const delays = raw.split(',').map((part) => Number(part.trim()))
  if (raw.trim() === '' || delays.some((delay) => !Number.isFinite(delay) || delay < 0)) {
    throw new ConfigError(`WEBHOOK_RETRY_SCHEDULE must be a comma-separated list of delays in seconds, got "${raw}"`)
  }
  return delays
}

const MAX_RETENTION_DAYS = 36_500

/** `RETENTION_DAYS` for every event type, `RETENTION_DAYS_<TYPE>` (named from `eventTypes`) for one; unknown names are refused. */
function retentionDays(env: Env, eventTypes: readonly RetainedEventType[]): Record<string, number> {
  const fallback = integer(env, 'RETENTION_DAYS', 30, 1, MAX_RETENTION_DAYS)
  const variables = new Map(eventTypes.map((eventType) => [`RETENTION_DAYS_${eventType.type.toUpperCase()}`, eventType]))
  for (const name of Object.keys(env)) {
    if (name.startsWith('RETENTION_DAYS_') && name !== 'RETENTION_DAYS_ALERTS' && !variables.has(name) && optional(env, name) !== undefined) {
      throw new ConfigError(`${name} names no event type; the per-type variables are ${[...variables.keys()].join(', ')}`)
    }
  }
  return Object.fromEntries(
    [...variables].map(([name, eventType]) => [eventType.type, integer(env, name, eventType.retention?.defaultDays ?? fallback, 1, MAX_RETENTION_DAYS)]),
  )
}
