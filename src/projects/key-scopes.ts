import { Type, type Static } from 'typebox'

/**
 * What an API key may feed. `ingest` is the signed `POST /api/ingest` (and error capture), every key's
 * default. `otlp` and `sentry` are protocols that cannot sign their bodies: the key alone is the
 * credential there, so a key is accepted on them only when it was created for them.
 */
export const KeyScope = Type.Union([Type.Literal('ingest'), Type.Literal('otlp'), Type.Literal('sentry')], {
  description: '`ingest`: the signed POST /api/ingest and POST /api/errors/capture; `otlp`: /api/otlp/v1/*; `sentry`: the Sentry envelope and store endpoints',
})

export type KeyScope = Static<typeof KeyScope>

export const DEFAULT_KEY_SCOPES: KeyScope[] = ['ingest']

/** Scopes are stored space-separated in `api_keys.scopes`, in a fixed order. */
export function storedScopes(scopes: KeyScope[]): string {
  return (['ingest', 'otlp', 'sentry'] as const).filter((scope) => scopes.includes(scope)).join(' ')
}

export function parseScopes(stored: string): KeyScope[] {
  return stored.split(' ').filter((scope): scope is KeyScope => scope === 'ingest' || scope === 'otlp' || scope === 'sentry')
}
