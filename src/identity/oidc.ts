import { createRemoteJWKSet, jwtVerify, errors } from 'jose'
import type { Kysely } from 'kysely'
import type { Config } from '../config.ts'
import type { OidcIdentity, OidcVerifier } from '../context.ts'
import type { Database } from '../storage/tables.ts'

export type OidcConfig = NonNullable<Config['oidc']>

/** Why a JWT bearer was refused, in words that name the claim at fault and never echo the token. */
export class OidcRefusal extends Error {}

/** The issuer's key set could not be fetched: the authorisation service is down, not the caller wrong. */
export class OidcUnavailable extends Error {}

/**
 * Verifies OIDC bearer JWTs against the issuer's JWKS (keys cached and refreshed by jose), and maps
 * the configured claims to an organisation of this portal and a role.
 */
export function createOidcVerifier(config: OidcConfig, db: Kysely<Database>): OidcVerifier {
  const keys = createRemoteJWKSet(new URL(config.jwksUrl), { timeoutDuration: 2000 })

  return {
    async verify(token: string): Promise<OidcIdentity> {
      let payload
      try {
        ;({ payload } = await jwtVerify(token, keys, { issuer: config.issuer, audience: config.audience }))
      } catch (error) {
        if (error instanceof errors.JWKSTimeout || !(error instanceof errors.JOSEError)) {
          throw new OidcUnavailable(`the identity provider's keys could not be fetched: ${(error as Error).message}`)
        }
        throw new OidcRefusal(`the JWT was refused: ${error.message}`)
      }
      const orgId = payload[config.orgClaim]
      const role = payload[config.roleClaim]
      if (typeof orgId !== 'string') throw new OidcRefusal(`the JWT has no string claim ${config.orgClaim} naming an organisation`)
      if (role !== 'admin' && role !== 'viewer') throw new OidcRefusal(`the JWT claim ${config.roleClaim} must be admin or viewer`)
      const org = await db.selectFrom('organizations').select('id').where('id', '=', orgId).executeTakeFirst()
      if (!org) throw new OidcRefusal(`the JWT's organisation ${orgId} does not exist in this portal`)
      return { subject: String(payload.sub ?? 'unknown'), orgId, role }
    },
    /** The health check of the authorisation service: can the issuer's key set be fetched? */
    async checkReachable(): Promise<void> {
      const response = await fetch(config.jwksUrl, { signal: AbortSignal.timeout(2000) })
      if (!response.ok) throw new Error(`the JWKS endpoint answered ${response.status}`)
      const body = (await response.json()) as { keys?: unknown }
      if (!Array.isArray(body.keys)) throw new Error('the JWKS endpoint answered without a keys array')
    },
  }
}
