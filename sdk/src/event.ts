import type { EventDataByType } from './events.generated.js'

/** One of the portal's event types. */
export type EventType = keyof EventDataByType

/** When the event happened; now when absent. A string must be an ISO 8601 UTC timestamp. */
export interface EventOptions {
  ts?: Date | string
}

/** An event as `client.send()` takes it: its `type` decides the shape of `data`. */
export type PortalEvent<T extends EventType = EventType> = {
  [K in T]: { type: K; data: EventDataByType[K] } & EventOptions
}[T]
