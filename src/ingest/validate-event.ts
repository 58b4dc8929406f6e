import { Compile } from 'typebox/compile'
import type { TObject } from 'typebox'
import type { TLocalizedValidationError } from 'typebox/error'
import { nestedDeeperThan } from '../http/json-body.ts'
import { formReason } from '../modules/fields.ts'
import type { EventModule } from '../modules/module.ts'
import { eventTypes, moduleByType } from '../modules/registry.ts'

export type EventCheck = { module: EventModule; ts: number; data: Record<string, unknown>; dataJson: string } | { reason: string }

const validators = new Map([...moduleByType].map(([type, module]) => [type, Compile(module.payload)]))

/** The module's compiled payload check; compiled on first use for a module registered after this file loaded. */
function validatorOf(module: EventModule) {
  let validator = validators.get(module.type)
  if (!validator) validators.set(module.type, (validator = Compile(module.payload)))
  return validator
}

// ISO 8601 date-time in UTC: a Z or a zero offset; seconds and fractions optional.
const UTC_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(:\d{2}(\.\d{1,9})?)?(Z|[+-]00:?00)$/

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
}

/** Checks one event of a batch: the envelope first, then the payload with its module's own schema. */
export function checkEvent(raw: unknown): EventCheck {
  if (!isPlainObject(raw)) return { reason: 'event: must be an object with type, ts and data' }
  const module = typeof raw.type === 'string' ? moduleByType.get(raw.type) : undefined
  if (!module) return { reason: `type: must be one of ${eventTypes.join(', ')}` }
  const ts = utcTimestamp(raw.ts)
  if (ts === undefined) return { reason: 'ts: must be an ISO 8601 UTC timestamp, e.g. 2026-01-31T12:00:00.000Z' }
  const data = raw.data
  if (!isPlainObject(data)) return { reason: 'data: must be an object' }
  const validator = validatorOf(module)
  if (!validator.Check(data)) return { reason: payloadReasons(module.payload, [...validator.Errors(data)]) }
  const crossField = module.check?.(data)
  if (crossField) return { reason: crossField }
  // JSON.stringify and PostgreSQL's jsonb both recurse: a payload nested thousands deep cannot be stored or read back.
  if (nestedDeeperThan(data, MAX_DATA_DEPTH)) return { reason: `data: is nested deeper than ${MAX_DATA_DEPTH} levels` }
  return { module, ts, data, dataJson: JSON.stringify(data) }
}

export const MAX_DATA_DEPTH = 64

function payloadReasons(payload: TObject, errors: TLocalizedValidationError[]): string {
  const reasons = errors.map((error) => {
    const path = ['data', ...error.instancePath.split('/').filter(Boolean)]
    if (error.keyword === 'required') return `${path.join('.')}.${error.params.requiredProperties[0]}: required`
    const field = path.join('.')
    const schema = payload.properties[path[1]]
    switch (error.keyword) {
      case 'type':
        return `${field}: must be ${TYPE_NAMES[String(error.params.type)] ?? error.params.type}`
      case 'minimum':
        return `${field}: must be at least ${error.params.limit}`
      case 'maximum':
        return `${field}: must be at most ${error.params.limit}`
      default:
        return `${field}: ${formReason(schema) ?? error.message}`
    }
  })
  return [...new Set(reasons)].join('; ')
}

function utcTimestamp(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined
  const match = UTC_TIMESTAMP.exec(value)
  if (!match) return undefined
  const ms = Date.parse(value)
  if (!Number.isFinite(ms)) return undefined
  // Date.parse rolls 2026-02-30 over into March and T24:00 into the next day: only a real date and hour count.
  // (Counted, not read back through toISOString: that was a tenth of the event loop's time at full ingest.)
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  const daysInMonth = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]
  return day >= 1 && day <= daysInMonth && match[4] !== '24' ? ms : undefined
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
