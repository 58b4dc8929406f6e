import fs from 'node:fs'
import path from 'node:path'
import type { Config } from '../config.ts'
import { createAccessToken, DEFAULT_ORG_ID } from '../identity/store.ts'
import type { Storage } from '../storage/storage.ts'
import { BackupError } from './backup.ts'

/** Where this shell's configuration says the portal listens; `0.0.0.0` and `::` are reached on loopback. */
export function localPortalUrl(config: Pick<Config, 'host' | 'port'>): string {
  const host = config.host === '0.0.0.0' || config.host === '::' || config.host === '' ? '127.0.0.1' : config.host
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`
}

/**
 * `portal backup` beside a running portal that holds events.duckdb: the portal writes the backup itself
 * (`POST /api/backups`, the only process that can read that file), and the folder it wrote is moved to
 * `destination`. The CLI has the database, so it is an admin already: it makes an admin token of the default
 * organisation for this one request and revokes it after. Returns the files in `destination`.
 */
export async function backupThroughRunningPortal(config: Config, storage: Storage, destination: string, portalUrl = localPortalUrl(config)): Promise<string[]> {
  if (fs.existsSync(destination) && fs.readdirSync(destination).length > 0) throw new BackupError(`${destination} is not empty; back up into an empty folder`)
  const { id, token } = await createAccessToken(storage.db, { orgId: DEFAULT_ORG_ID, role: 'admin', name: 'portal backup (CLI; revoked after its request)' })
  let response: Response
  try {
    response = await fetch(`${portalUrl}/api/backups`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
  } catch (error) {
    throw new BackupError(
      `events.duckdb is held by a running portal, but none answers at ${portalUrl} (${(error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message}); ` +
        `pass --url with the portal's address, or stop the portal and run portal backup again`,
    )
  } finally {
    await storage.db.updateTable('access_tokens').set({ revoked_at: Date.now() }).where('id', '=', id).execute()
  }
  const body = (await response.json().catch(() => ({}))) as { folder?: string; files?: { name: string }[]; detail?: string }
  if (response.status !== 201 || !body.folder || !body.files) throw new BackupError(`the portal at ${portalUrl} refused the backup: ${response.status} ${body.detail ?? ''}`.trim())
  if (!fs.existsSync(body.folder)) throw new BackupError(`the portal at ${portalUrl} wrote its backup into ${body.folder}, which is not on this machine; copy it from the portal's host`)
  moveFolder(body.folder, destination)
  return body.files.map((file) => path.join(destination, file.name))
}

/** Moves `from` to `to` (an absent or empty folder): one rename on the same file system, a copy then a removal across two. */
function moveFolder(from: string, to: string) {
  fs.rmSync(to, { recursive: true, force: true })
  fs.mkdirSync(path.dirname(path.resolve(to)), { recursive: true })
  try {
    fs.renameSync(from, to)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error
    fs.cpSync(from, to, { recursive: true })
    fs.rmSync(from, { recursive: true, force: true })
  }
}
