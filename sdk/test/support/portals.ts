import { after, before } from 'node:test'
import { loadConfig } from '../../../src/config.ts'
import { modules } from '../../../src/modules/registry.ts'
import { createLogger, startPortal, type RunningPortal } from '../../../src/portal.ts'
import { createProject, createTestDatabase, startTestPortal, type Dialect, type TestPortal } from '../../../test/support/portal.ts'
import { PortalClient, type PortalClientError, type PortalClientOptions, type RejectedEvent } from '../../src/index.ts'
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts'

const BOOTSTRAP_TOKEN = 'pat_sdk_restart_test_admin_token'

/**
 * A real portal that can be stopped and started again on the same database and the same port, as
 * a deploy or a crash-and-restart would do to a client in the middle of sending.
 */
export interface RestartablePortal {
  url: string
  adminToken: string
  restart(downMs?: number): Promise<void>
  close(): Promise<void>
}

export async function startRestartablePortal(dialect: Dialect, env: Record<string, string> = {}): Promise<RestartablePortal> {
  const database = await createTestDatabase(dialect, { migrated: true })
  const start = async (port: string) => {
    const config = loadConfig(modules, {
      PORT: port,
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      PORTAL_DATA_DIR: database.dataDir,
      PORTAL_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
      LOG_LEVEL: 'silent',
      // As for startTestPortal's portals: this one shares the test's event loop, and the 503 a client
      // must survive is injected by the proxy.
      LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
      ...env,
    })
    return startPortal(config, createLogger(config))
  }
  let portal: RunningPortal = await start('0')
  const url = portal.url
  return {
    url,
    adminToken: BOOTSTRAP_TOKEN,
    async restart(downMs = 300) {
      await portal.close()
      await new Promise((resolve) => setTimeout(resolve, downMs))
      portal = await start(new URL(url).port)
    },
    async close() {
      await portal.close()
      await database.drop()
    },
  }
}

/** A project and an API key made over HTTP with an admin token. */
export async function createProjectAt(baseUrl: string, adminToken: string): Promise<{ id: string; key: string; webhookSecret: string }> {
  const post = async (requestPath: string, body: unknown) => {
    const response = await fetch(baseUrl + requestPath, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    if (response.status !== 201) throw new Error(`${requestPath}: ${response.status} ${await response.text()}`)
    return (await response.json()) as Record<string, string>
  }
  const project = await post('/api/projects', { name: 'sdk restart test' })
  const key = await post(`/api/projects/${project.id}/keys`, { name: 'sdk' })
  return { id: project.id, key: key.key, webhookSecret: key.webhookSecret }
}

export interface ProxiedPortal {
  t: TestPortal
  proxy: FaultProxy
}

/** A real portal with a fault proxy in front of it, started before the suite's tests and stopped after them. */
export function proxiedPortal(dialect: Dialect, env: Record<string, string> = {}): ProxiedPortal {
  const setup = {} as ProxiedPortal
  before(async () => {
    setup.t = await startTestPortal(dialect, env)
    setup.proxy = await startFaultProxy(setup.t.url)
  })
  after(async () => {
    await setup.proxy.close()
    await setup.t.close()
  })
  return setup
}

/** A new project, and a client that sends to it through the proxy and collects what it reports. */
export async function proxiedClient({ t, proxy }: ProxiedPortal, options: Partial<PortalClientOptions> = {}) {
  const project = await createProject(t)
  const errors: PortalClientError[] = []
  const rejected: RejectedEvent[] = []
  const client = new PortalClient({
    baseUrl: proxy.url,
    apiKey: project.key,
    webhookSecret: project.webhookSecret,
    onError: (error) => errors.push(error),
    onRejected: (events) => rejected.push(...events),
    ...options,
  })
  return { project, client, errors, rejected, firstIngest: proxy.ingests.length }
}
