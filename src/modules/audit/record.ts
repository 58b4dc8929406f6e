import type { PortalContext } from '../../context.ts'
import type { Principal } from '../../http/auth.ts'
import { newEventId } from '../../ids.ts'
import { writeEvents } from '../write-events.ts'
import { auditModule } from './module.ts'
import { tablesOf, type Connection } from '../../storage/tables.ts'

/** Writes a management action into the project's own audit module, with the acting token as `actor`. */
export async function recordManagementAction(
  trx: Connection,
  ctx: PortalContext,
  projectId: string,
  principal: Principal | null,
  action: string,
  resource: string,
  metadata: Record<string, unknown> = {},
): Promise<void> {
  const now = Date.now()
  const actor = principal?.kind === 'accessToken' ? principal.tokenId : principal?.kind === 'apiKey' ? principal.keyId : 'portal'
  const data = { actor, action, resource, metadata: principal?.kind === 'accessToken' ? { tokenName: principal.name, ...metadata } : metadata }
  await writeEvents(tablesOf(trx), ctx, [{ module: auditModule, event: { id: newEventId(now), projectId, ts: now, receivedAt: now, data }, dataJson: JSON.stringify(data) }])
}
