import { Type, type TSchema } from 'typebox'

/**
 * Payload field kinds shared by several modules. `x-reason` is the text a rejection gives when the
 * value has the right type but not the right form; it also shows in the OpenAPI document.
 */
export const Text = (description?: string) => Type.String({ description })

export const HttpUrl = (description?: string) =>
  Type.String({ description, pattern: '^https?://[^\\s/?#]+[^\\s]*$', 'x-reason': 'must be an absolute http(s) URL' })

export const YearMonth = () =>
  Type.String({ description: 'YYYY-MM', pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$', 'x-reason': 'must be a month in YYYY-MM form' })

export const CurrencyCode = () =>
  Type.String({ description: 'ISO 4217 code', pattern: '^[A-Z]{3}$', 'x-reason': 'must be three upper-case letters (ISO 4217)' })

export const RepoName = () =>
  Type.String({ description: 'owner/name', pattern: '^[^/\\s]+/[^/\\s]+$', 'x-reason': 'must be in owner/name form' })

export const NonNegative = (description?: string) => Type.Number({ description, minimum: 0 })

export const StatusCode = () => Type.Integer({ description: 'HTTP status code', minimum: 100, maximum: 599 })

export const Context = (description?: string) => Type.Record(Type.String(), Type.Unknown(), { description })

/** The reason text a schema gives for a value of the right type but the wrong form. */
export function formReason(schema: TSchema | undefined): string | undefined {
  return (schema as { 'x-reason'?: string } | undefined)?.['x-reason']
}
