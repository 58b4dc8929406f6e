import fs from 'node:fs'
import path from 'node:path'
import { Type } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { named } from '../http/openapi-components.ts'
import { ProblemError, problemResponses } from '../http/problem.ts'
import { DEFAULT_ORG_ID } from '../identity/store.ts'
import { newId } from '../ids.ts'
import { copyKeyFile } from './backup.ts'

const Backup = named(
  'Backup',
  Type.Object(
    {
      id: Type.String({ description: 'bak_…, also the name of its folder' }),
      folder: Type.String({ description: 'where the portal wrote it, on the portal’s host: `<PORTAL_DATA_DIR>/backups/<id>`' }),
      files: Type.Array(Type.Object({ name: Type.String(), bytes: Type.Integer() }), { description: 'what it holds; the folder is a data folder a portal starts on as it is' }),
      createdAt: Type.String({ format: 'date-time', description: 'when the copy began: it holds every event acknowledged before then' }),
      durationMs: Type.Integer(),
    },
    {
      description: 'A consistent copy of the embedded database, written by the running portal into its data folder.',
      examples: [
        {
          id: 'bak_01jd3z8q6r2n5m7k9p4txyzabc',
          folder: '/var/lib/portal/data/backups/bak_01jd3z8q6r2n5m7k9p4txyzabc',
          files: [{ name: 'portal.db', bytes: 4_096_000 }, { name: 'events.duckdb', bytes: 44_040_192 }, { name: 'secret.key', bytes: 64 }],
          createdAt: '2026-11-27T03:00:00.000Z',
          durationMs: 840,
        },
      ],
    },
  ),
)

/**
 * Backups the running portal writes itself, as Prometheus's snapshot API does: the only way to copy the
 * DuckDB event store while the portal holds it (src/backup/backup.ts is the stopped portal's way).
 */
export const backupRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  app.post(
    '/api/backups',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'createBackup',
        tags: ['operations'],
        summary: 'Write a backup of the embedded database into the portal’s data folder',
        description:
          'The SQLite database (SQLite’s online backup), the DuckDB event store when EVENT_STORE=duckdb, and the key file webhook secrets are encrypted under, ' +
          'into `<PORTAL_DATA_DIR>/backups/<id>`; ingest goes on meanwhile, and reads of DuckDB-held events wait for the DuckDB copy. ' +
          'Copy the folder off the host; a portal restores by starting on it. Install-wide, so only an admin of the default organisation may. ' +
          'On PostgreSQL: 409 `backup_unsupported` (back it up with pg_dump). See docs/operations-guide.md.',
        response: { 201: Backup, ...problemResponses(401, 403, 'install_admin_required', 'backup_unsupported', 503) },
      },
    },
    async (request, reply) => {
      const principal = accessPrincipal(request)
      if (principal.orgId !== DEFAULT_ORG_ID) {
        throw new ProblemError(403, 'install_admin_required', 'a backup copies every organisation’s data: only an admin of the default organisation may write one')
      }
      if (!ctx.storage.backup) {
        throw new ProblemError(409, 'backup_unsupported', 'this portal’s database is not files of its own (PostgreSQL): back it up with pg_dump (docs/operations-guide.md)')
      }
      const startedAt = Date.now()
      const id = newId('bak', startedAt)
      const folder = path.join(ctx.config.dataDir, 'backups', id)
      let written: string[]
      try {
        written = [...(await ctx.storage.backup(folder)), ...copyKeyFile(ctx.config, folder)]
      } catch (error) {
        // A backup is whole or absent: a folder half written must not be mistaken for one.
        fs.rmSync(folder, { recursive: true, force: true })
        throw error
      }
      const files = written.map((file) => ({ name: path.basename(file), bytes: fs.statSync(file).size }))
      request.log.info({ backup: id, files, by: principal.tokenId }, 'backup written')
      return reply.code(201).send({ id, folder, files, createdAt: new Date(startedAt).toISOString(), durationMs: Date.now() - startedAt })
    },
  )
}
