import { Type, type Static } from 'typebox'
import { named } from '../http/openapi-components.ts'

/** Breadcrumbs kept per occurrence: the newest, as Sentry keeps 100. */
export const BREADCRUMBS_KEPT = 100
/** Sentry's own bounds on a tag: longer keys or values are not kept as tags (they stay in `metadata.tags`). */
const MAX_TAG_KEY = 32
const MAX_TAG_VALUE = 200
const MAX_TAGS = 50
/** Tag keys the group rows know by their own name; a Sentry tag of the same name is counted as `tags.NAME`. */
const BUILT_IN_KEYS = new Set(['environment', 'release', 'service', 'user'])

export const Breadcrumb = named(
  'Breadcrumb',
  Type.Object(
    {
      timestamp: Type.Optional(Type.String({ format: 'date-time', description: 'when it happened' })),
      type: Type.Optional(Type.String({ maxLength: 64, description: 'default, http, navigation, query, error, debug, …' })),
      category: Type.Optional(Type.String({ maxLength: 256, description: 'what recorded it: console, fetch, ui.click, …' })),
      level: Type.Optional(Type.String({ maxLength: 16, description: 'fatal, error, warning, info or debug' })),
      message: Type.Optional(Type.String({ maxLength: 8192 })),
      data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'what the category records: url, method, status_code, …' })),
    },
    { description: 'Something that happened before the error: a log line, a request, a click.' },
  ),
)
export type Breadcrumb = Static<typeof Breadcrumb>

export const Breadcrumbs = Type.Array(Breadcrumb, { maxItems: 1000, description: `what happened before it, oldest first; the newest ${BREADCRUMBS_KEPT} are kept` })

/** What an occurrence carries beyond its exception, read from a capture's body or an error event's data. */
export interface OccurrenceContext {
  breadcrumbs: Breadcrumb[] | null
  /** tag key → value counted per group: Sentry tags as `tags.NAME`, the user as `user` (`id:…`, `email:…` or `ip:…`) */
  tags: Record<string, string>
}

export function occurrenceContext(fields: Record<string, unknown>): OccurrenceContext {
  return { breadcrumbs: breadcrumbsOf(fields.breadcrumbs), tags: { ...tagsOf(fields.tags), ...userTag(fields.user) } }
}

/** Breadcrumbs as Sentry sends them (`{ values: [...] }` or a list), the newest BREADCRUMBS_KEPT, oldest first; seconds become ISO times. */
export function breadcrumbsOf(value: unknown): Breadcrumb[] | null {
  const list = Array.isArray(value) ? value : isObject(value) && Array.isArray(value.values) ? value.values : undefined
  if (!list) return null
  const crumbs = list.filter(isObject).slice(-BREADCRUMBS_KEPT).map(breadcrumb)
  return crumbs.length > 0 ? crumbs : null
}

function breadcrumb(value: Record<string, unknown>): Breadcrumb {
  const crumb: Breadcrumb = {}
  const timestamp = timeOf(value.timestamp)
  if (timestamp) crumb.timestamp = timestamp
  for (const [field, max] of [['type', 64], ['category', 256], ['level', 16], ['message', 8192]] as const) {
    if (typeof value[field] === 'string' && value[field] !== '') crumb[field] = (value[field] as string).slice(0, max)
  }
  if (isObject(value.data)) crumb.data = value.data
  return crumb
}

function timeOf(value: unknown): string | undefined {
  const ms = typeof value === 'number' && Number.isFinite(value) ? value * 1000 : typeof value === 'string' ? (/^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : Date.parse(value)) : NaN
  return Number.isFinite(ms) && Math.abs(ms) < 8.64e15 ? new Date(ms).toISOString() : undefined
}

/** Sentry's `tags` as an object: Sentry takes an object or a list of `[key, value]` pairs; undefined for neither or empty. */
export function sentryTags(value: unknown): Record<string, unknown> | undefined {
  const pairs = Array.isArray(value) ? value.filter((pair): pair is [string, unknown] => Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string') : isObject(value) ? Object.entries(value) : []
  return pairs.length > 0 ? Object.fromEntries(pairs.filter(([key]) => key !== '__proto__')) : undefined
}

/** Tags counted as facets: values that are text, numbers or booleans, within Sentry's bounds. */
function tagsOf(value: unknown): Record<string, string> {
  const pairs = Object.entries(sentryTags(value) ?? {})
  const tags: Record<string, string> = {}
  for (const [key, raw] of pairs.slice(0, MAX_TAGS)) {
    if (typeof key !== 'string' || key === '' || key.length > MAX_TAG_KEY) continue
    if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') continue
    const text = String(raw)
    if (text === '' || text.length > MAX_TAG_VALUE) continue
    tags[`tags.${key}`] = text
  }
  return tags
}

/** The user an occurrence affected, as Sentry's `user` tag names one: by id, else e-mail, else IP address. */
function userTag(value: unknown): Record<string, string> {
  if (!isObject(value)) return {}
  for (const [field, prefix] of [['id', 'id'], ['email', 'email'], ['ip_address', 'ip']] as const) {
    const raw = value[field]
    // `{{auto}}` asks Sentry's server to fill in the sender's address: not a user of its own.
    if ((typeof raw === 'string' && raw !== '' && raw !== '{{auto}}') || typeof raw === 'number') return { user: `${prefix}:${String(raw).slice(0, MAX_TAG_VALUE)}` }
  }
  return {}
}

/** How a tag key is shown: Sentry tags by their own name, unless that is one of the built-in keys. */
export function tagKeyShown(key: string): string {
  if (!key.startsWith('tags.')) return key
  const name = key.slice('tags.'.length)
  return BUILT_IN_KEYS.has(name) ? key : name
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
