import type { Kysely } from 'kysely'
import { newId } from '../ids.ts'
import type { Database } from '../storage/tables.ts'
import { displayPrefix, newCredential, sha256Hex } from './secrets.ts'

/** Created by the migration core/002_default_organization. */
export const DEFAULT_ORG_ID = 'org_default'

export type Role = 'admin' | 'viewer'

export async function createOrganization(db: Kysely<Database>, name: string): Promise<{ id: string; name: string }> {
  const id = newId('org')
  await db.insertInto('organizations').values({ id, name, created_at: Date.now() }).execute()
  return { id, name }
}

/** Creates an access token and returns its value, which is stored only as a hash. */
export async function createAccessToken(
  db: Kysely<Database>,
  options: { orgId: string; role: Role; name: string; value?: string },
): Promise<{ id: string; token: string }> {
  const token = options.value ?? newCredential('pat')
  const id = newId('tok')
  await db
    .insertInto('access_tokens')
    .values({
      id,
      org_id: options.orgId,
      name: options.name,
      role: options.role,
      token_hash: sha256Hex(token),
      prefix: displayPrefix(token),
      created_at: Date.now(),
      last_used_at: null,
      revoked_at: null,
    })
    .execute()
  return { id, token }
}

/**
 * Makes sure an admin can get in after start: the token of PORTAL_BOOTSTRAP_TOKEN exists (idempotent),
 * or, on a database with no token at all, a new admin token is made and returned to be printed once.
 */
export async function bootstrapAdmin(db: Kysely<Database>, bootstrapToken: string | undefined): Promise<string | undefined> {
  if (bootstrapToken !== undefined) {
    await db
      .insertInto('access_tokens')
      .values({
        id: newId('tok'),
        org_id: DEFAULT_ORG_ID,
        name: 'bootstrap (PORTAL_BOOTSTRAP_TOKEN)',
        role: 'admin',
        token_hash: sha256Hex(bootstrapToken),
        prefix: displayPrefix(bootstrapToken),
        created_at: Date.now(),
        last_used_at: null,
        revoked_at: null,
      })
      .onConflict((conflict) => conflict.column('token_hash').doNothing())
      .execute()
    return undefined
  }
  const any = await db.selectFrom('access_tokens').select('id').limit(1).executeTakeFirst()
  if (any) return undefined
  const { token } = await createAccessToken(db, { orgId: DEFAULT_ORG_ID, role: 'admin', name: 'first admin (printed at first start)' })
  return token
}
