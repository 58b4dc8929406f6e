import type { Kysely } from 'kysely'
import type { PortalContext } from '../context.ts'
import { MAX_VALUES_PER_STATEMENT } from '../storage/storage.ts'
import { updateGroupSummaries } from './group-summaries.ts'
import type { EventModule, StoredEvent } from './module.ts'

/** An accepted event with its payload already serialised (serialising is where a too-deep payload fails). */
export interface AcceptedEvent {
  module: EventModule<any>
  event: StoredEvent
  dataJson: string
}

/** Inserts accepted events into their modules' tables and runs each module's follow-up, inside `trx`. */
export async function writeEvents(trx: Kysely<any>, ctx: PortalContext, accepted: AcceptedEvent[]): Promise<void> {
  const byModule = new Map<EventModule<any>, AcceptedEvent[]>()
  for (const item of accepted) {
    const group = byModule.get(item.module)
    if (group) group.push(item)
    else byModule.set(item.module, [item])
  }
  for (const [module, items] of byModule) {
    const rows = items.map(({ event, dataJson }) => ({
      id: event.id,
      project_id: event.projectId,
      ts: event.ts,
      received_at: event.receivedAt,
      data: dataJson,
      ...module.columns(event.data, event),
    }))
    const rowsPerStatement = Math.max(1, Math.floor(MAX_VALUES_PER_STATEMENT / Object.keys(rows[0]).length))
    for (let start = 0; start < rows.length; start += rowsPerStatement) {
      await trx.insertInto(module.table).values(rows.slice(start, start + rowsPerStatement)).execute()
    }
    await updateGroupSummaries(trx, module, rows)
    await module.afterWrite?.(trx, items.map((item) => item.event), ctx)
  }
}
