import { isPlainObject } from '../../ingest/validate-event.ts'
import type { PortalEvent } from './events.ts'

type Json = Record<string, unknown>

/**
 * A `session` item (one session's update: sid, did, status, errors, started, attrs) as one `session`
 * event; a `sessions` item (request-mode SDKs: counts per started bucket, with attrs) as one event per
 * aggregate. Fields are passed as Sentry names them, translated to the payload's names: a value of the
 * wrong type is refused by the sessions module's schema, naming the field, never dropped here.
 */
export function translateSentrySessions(type: 'session' | 'sessions', item: Json, receivedAt: number): PortalEvent[] {
  const attrs = isPlainObject(item.attrs) ? item.attrs : {}
  const common = withoutUndefined({ release: attrs.release, environment: attrs.environment })
  if (type === 'session') {
    const started = timeOf(item.started) ?? timeOf(item.timestamp) ?? new Date(receivedAt).toISOString()
    const data = withoutUndefined({
      ...common,
      started,
      sessionId: item.sid,
      distinctId: item.did,
      status: item.status,
      errors: item.errors,
      init: item.init,
      duration: item.duration,
    })
    return [{ type: 'session', ts: timeOf(item.timestamp) ?? started, data }]
  }
  const aggregates = Array.isArray(item.aggregates) ? item.aggregates : []
  return aggregates.map((aggregate) => {
    const entry = isPlainObject(aggregate) ? aggregate : {}
    const started = timeOf(entry.started) ?? new Date(receivedAt).toISOString()
    const data = withoutUndefined({ ...common, started, distinctId: entry.did, exited: entry.exited, errored: entry.errored, abnormal: entry.abnormal, crashed: entry.crashed })
    return { type: 'session', ts: started, data }
  })
}

/** Sentry's session times: RFC 3339 text or seconds since the epoch; clamped to the time received by the pipeline's own rules. */
function timeOf(value: unknown): string | undefined {
  const ms = typeof value === 'number' && Number.isFinite(value) ? value * 1000 : typeof value === 'string' ? Date.parse(value) : NaN
  return Number.isFinite(ms) && Math.abs(ms) < 8.64e15 ? new Date(ms).toISOString() : undefined
}

function withoutUndefined(object: Json): Json {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined && value !== null))
}
