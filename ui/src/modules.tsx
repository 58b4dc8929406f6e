import { useGet } from './api.ts'
import type { components } from './api-types.generated.ts'

/** An event type of the registry, as the public API names it: the type and where its reads live. */
export interface EventModule {
  type: string
  basePath: string
}

/**
 * Event types with a page of their own: section path, label, and the type it shows (none for pages that
 * are not one event type's). Types of the registry missing here get the generic events page, so a
 * module added to the registry has a page and a navigation entry without a change in the UI.
 */
export const SECTIONS: { path: string; label: string; type?: string }[] = [
  { path: 'errors', label: 'Errors', type: 'error' },
  { path: 'logs', label: 'Logs', type: 'log' },
  { path: 'traces', label: 'Traces', type: 'trace' },
  { path: 'deploys', label: 'Deploys', type: 'deploy' },
  { path: 'releases', label: 'Releases', type: 'session' },
  { path: 'costs', label: 'Costs', type: 'cost' },
  { path: 'performance', label: 'Performance', type: 'performance' },
  { path: 'flags', label: 'Feature flags', type: 'feature_flag' },
  { path: 'configs', label: 'Configs', type: 'config' },
  { path: 'repository', label: 'Repository', type: 'repository' },
  { path: 'webhooks', label: 'Webhooks', type: 'webhook' },
  { path: 'audit', label: 'Audit', type: 'audit' },
  { path: 'tenants', label: 'Tenants', type: 'tenant' },
  { path: 'video', label: 'Video jobs', type: 'video' },
  { path: 'alerts', label: 'Alerts' },
  { path: 'keys', label: 'API keys' },
  { path: 'storage', label: 'Storage' },
]

/** The page of an event type: its own section, else the generic events page. */
export function sectionOfType(type: string): string {
  return SECTIONS.find((section) => section.type === type)?.path ?? `events/${encodeURIComponent(type)}`
}

/**
 * The registry's event types, read from the project's retention (it lists every type with its status read,
 * whose path is the module's base path): one read the Storage page makes anyway.
 */
export function useModules(project: string): EventModule[] | undefined {
  const retention = useGet<components['schemas']['ProjectRetention']>(`/api/projects/${encodeURIComponent(project)}/retention`)
  if (!retention.data) return undefined
  return Object.entries(retention.data.effective).map(([type, { statusPath }]) => ({ type, basePath: statusPath.replace(/\/status$/, '') }))
}

/** Navigation entries: the dedicated sections, then one per registry type without a page of its own. */
export function navigationEntries(modules: EventModule[] | undefined): { path: string; label: string }[] {
  const generic = (modules ?? []).filter((module) => !SECTIONS.some((section) => section.type === module.type))
  const entries = SECTIONS.map(({ path, label }) => ({ path, label }))
  const beforeKeys = entries.findIndex((entry) => entry.path === 'keys')
  entries.splice(beforeKeys, 0, ...generic.map((module) => ({ path: `events/${encodeURIComponent(module.type)}`, label: module.type })))
  return entries
}

