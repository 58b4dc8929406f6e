import type { JsonNode } from './openapi-components.ts'

/**
 * An example value for a JSON schema, for the OpenAPI document's request bodies and responses: the
 * schema's own `examples[0]` (or `default`, `const`, first `enum` value) wherever one is given,
 * otherwise a value built from its type, format and bounds. Schemas a reader meets most (a project, an
 * error group, each payload) carry hand-written examples; the rest follow from them.
 */
export function exampleOf(schema: unknown, propertyName = 'value', depth = 0): unknown {
  if (typeof schema !== 'object' || schema === null || depth > 12) return null
  const s = schema as JsonNode
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0]
  if (s.example !== undefined) return s.example
  if (s.const !== undefined) return s.const
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0]
  if (s.default !== undefined) return s.default
  const branches: unknown[] | undefined = s.anyOf ?? s.oneOf
  if (branches) {
    const first = branches.find((branch) => (branch as { type?: unknown }).type !== 'null') ?? branches[0]
    return exampleOf(first, propertyName, depth + 1)
  }
  if (Array.isArray(s.allOf)) return Object.assign({}, ...s.allOf.map((part: unknown) => exampleOf(part, propertyName, depth + 1)))
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type
  switch (type) {
    case 'object':
      return objectExample(s, depth)
    case 'array': {
      const count = Math.max(1, s.minItems ?? 1)
      return Array.from({ length: count }, () => exampleOf(s.items, propertyName, depth + 1))
    }
    case 'string':
      return stringExample(s, propertyName)
    case 'integer':
      return numberIn(s, 1)
    case 'number':
      return numberIn(s, 12.5)
    case 'boolean':
      return true
    case 'null':
      return null
    default:
      return s.properties ? objectExample(s, depth) : null
  }
}

function objectExample(s: JsonNode, depth: number): Record<string, unknown> {
  const example: Record<string, unknown> = {}
  for (const [name, property] of Object.entries((s.properties ?? {}) as Record<string, unknown>)) example[name] = exampleOf(property, name, depth + 1)
  return example
}

function numberIn(s: JsonNode, preferred: number): number {
  const low = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : undefined)
  const high = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : undefined)
  if (low !== undefined && preferred < low) return low
  if (high !== undefined && preferred > high) return high
  return preferred
}

const EXAMPLE_TIME = '2026-11-23T18:30:00.000Z'

const BY_FORMAT: Record<string, string> = {
  'date-time': EXAMPLE_TIME,
  date: '2026-11-23',
  uuid: '6f1c2a9e-4b7d-4e0a-9c3f-2d8e5b1a7c40',
  uri: 'https://hooks.example.com/portal',
  email: 'alice@example.com',
}

/** An id's prefix, read from its description (`prj_…`), so that an example id looks like the real ones. */
const ID_PREFIX = /^([a-z]{2,6})_…/

function stringExample(s: JsonNode, propertyName: string): string {
  if (typeof s.format === 'string' && BY_FORMAT[s.format]) return BY_FORMAT[s.format]
  const prefix = typeof s.description === 'string' ? ID_PREFIX.exec(s.description)?.[1] : undefined
  if (prefix) return `${prefix}_01JD3Z8Q6R2N5M7K9P4TXYZABC`
  const text = propertyName.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase()
  const min = s.minLength ?? 0
  return text.length >= min ? text : text.padEnd(min, 'x')
}
