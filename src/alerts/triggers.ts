import { newId } from '../ids.ts'
import type { Notifications } from '../notifications.ts'
import { alertSignals } from './catalog.ts'
import { alertDb } from './tables.ts'

/**
 * The portal's notifications, plus a trigger row in the same transaction for each one an event-driven signal
 * watches (a new error group, a failed deploy): once it commits, the next scheduler tick of any portal makes the
 * project's rules on that signal due now, so they fire within a tick rather than at their interval.
 */
export function withAlertTriggers(notifications: Notifications): Notifications {
  const watched = new Set(alertSignals().flatMap((signal) => signal.triggeredBy ?? []))
  return {
    async publish(trx, projectId, type, data) {
      await notifications.publish(trx, projectId, type, data)
      if (!watched.has(type)) return
      const now = Date.now()
      await alertDb(trx).insertInto('alert_triggers').values({ id: newId('alt', now), project_id: projectId, notification_type: type, created_at: now }).execute()
    },
  }
}
