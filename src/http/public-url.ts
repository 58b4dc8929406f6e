import type { FastifyRequest } from 'fastify'
import type { Config } from '../config.ts'

/**
 * The base URL clients reach the portal at, for the DSNs and endpoints it shows: PUBLIC_URL when set,
 * else the scheme and host of the request (X-Forwarded-Proto and -Host only from proxies TRUST_PROXY
 * names, so that behind a TLS-terminating proxy the DSN does not read `http://` and the inner host).
 */
export function publicBaseUrl(config: Pick<Config, 'publicUrl'>, request: FastifyRequest): string {
  return config.publicUrl ?? `${request.protocol}://${request.host}`
}
