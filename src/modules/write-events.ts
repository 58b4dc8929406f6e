import type { Kysely } from 'kysely'
import type { WriteContext } from '../context.ts'
import { updateGroupSummaries } from './group-summaries.ts'
import { updateGroupHours } from './group-hours.ts'
import type { Database } from '../storage/tables.ts'
import type { EventModule, EventTableRow, StoredEvent } from './module.ts'

/** An accepted event with its payload already serialised (serialising is where a too-deep payload fails). */
export interface AcceptedEvent {
  module: EventModule
  event: StoredEvent
  dataJson: string
}

/** Inserts accepted events into their modules' tables and runs each module's follow-up, inside `trx`. */
export async function writeEvents(trx: Kysely<Database>, ctx: WriteContext, accepted: AcceptedEvent[]): Promise<void> {
  const byModule = new Map<EventModule, AcceptedEvent[]>()
  for (const item of accepted) {
    const group = byModule.get(item.module)
    if (group) group.push(item)
    else byModule.set(item.module, [item])
  }
  // One module order for every transaction, whatever order a batch's events came in: concurrent ingests on
  // PostgreSQL (several group commits of one portal, or several portals) lock summary rows in the same order,
  // so neither waits for a row the other holds while holding one it wants (a deadlock).
  const inTableOrder = [...byModule].sort(([a], [b]) => (a.table < b.table ? -1 : a.table > b.table ? 1 : 0))
  for (const [module, items] of inTableOrder) {
    const store = ctx.storage.eventsOf(module.table)
    const rows = items.map(({ event, dataJson }): EventTableRow => {
      const columns = module.columns(event.data, event)
      return { id: event.id, project_id: event.projectId, ts: event.ts, received_at: event.receivedAt, data: store.storedData(event.data, columns, dataJson), ...columns }
    })
    await store.append(trx, module.table, rows)
    await updateGroupSummaries(trx, module, rows)
    await updateGroupHours(trx, module, rows)
    await module.afterWrite?.(trx, items.map((item) => item.event), ctx)
  }
}
