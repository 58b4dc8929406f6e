import type { EventModule } from './module.ts'
import { auditModule } from './audit/module.ts'
import { configsModule } from './configs/module.ts'
import { costsModule } from './costs/module.ts'
import { deploysModule } from './deploys/module.ts'
import { errorsModule } from '../errors/module.ts'
import { flagsModule } from './flags/module.ts'
import { logsModule } from './logs/module.ts'
import { performanceModule } from './performance/module.ts'
import { repositoryModule } from './repository/module.ts'
import { sessionsModule } from './sessions/module.ts'
import { tenantsModule } from './tenants/module.ts'
import { tracesModule } from './traces/module.ts'
import { videoModule } from './video/module.ts'
import { webhooksModule } from '../webhooks/module.ts'

/** Every event type the portal takes, one line each; ingest, reads, migrations and OpenAPI read this list. */
export const modules: EventModule[] = [
  auditModule,
  configsModule,
  costsModule,
  deploysModule,
  errorsModule,
  flagsModule,
  logsModule,
  performanceModule,
  repositoryModule,
  sessionsModule,
  tenantsModule,
  tracesModule,
  videoModule,
  webhooksModule,
]

export const moduleByType: ReadonlyMap<string, EventModule> = new Map(modules.map((module) => [module.type, module]))

export const eventTypes: string[] = modules.map((module) => module.type)

/** The modules `registerModule` added: a thread that loads this file afresh (the ingest writer's) lacks them. */
export const registeredAtRunTime: EventModule[] = []

/**
 * Adds a module beyond the list above, to `modules`, `moduleByType` and `eventTypes` alike: a test's
 * throwaway module proves that everything follows the registry. Call it before the portal is imported.
 */
export function registerModule(module: EventModule): void {
  if (moduleByType.has(module.type)) throw new Error(`event type ${module.type} is registered already`)
  modules.push(module)
  ;(moduleByType as Map<string, EventModule>).set(module.type, module)
  eventTypes.push(module.type)
  registeredAtRunTime.push(module)
}
