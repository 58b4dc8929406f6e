import { isDeepStrictEqual } from 'node:util'
import type { TSchema } from 'typebox'

/**
 * The keyword that names a schema for the OpenAPI document. Routes embed their TypeBox schemas as
 * they are (so validation, serialisation and types stay untouched); the document lifts every schema
 * so named into `components.schemas` and refers to it by `$ref`, so generators emit named types.
 */
export const COMPONENT_NAME = 'x-component-name'

/** Names `schema` in the OpenAPI document (`#/components/schemas/<name>`); returns the same schema. */
export function named<T extends TSchema>(name: string, schema: T): T {
  ;(schema as Record<string, unknown>)[COMPONENT_NAME] = name
  return schema
}

export function nameOf(schema: unknown): string | undefined {
  return typeof schema === 'object' && schema !== null ? ((schema as Record<string, unknown>)[COMPONENT_NAME] as string | undefined) : undefined
}

/** A node of the OpenAPI document or of a JSON Schema as parsed JSON, walked by key. */
// any: its shape is the specification's, not a TypeScript type; `unknown` would need a cast at each step of a walk
export type JsonNode = Record<string, any>

/**
 * Moves every named schema of the document into `components.schemas`, leaving a `$ref` where it was.
 * A name given to two different schemas keeps the second inline (the document test names it).
 */
export function hoistNamedSchemas(document: JsonNode): void {
  const components: Record<string, unknown> = (document.components.schemas ??= {})
  const visit = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(visit)
    if (typeof value !== 'object' || value === null) return value
    const copy: Record<string, unknown> = {}
    for (const [key, child] of Object.entries(value)) if (key !== COMPONENT_NAME) copy[key] = visit(child)
    const name = nameOf(value)
    if (name === undefined) return copy
    const known = components[name] as Record<string, unknown> | undefined
    if (known === undefined || (sameShape(known, copy) && known.examples === undefined)) components[name] = copy
    else if (!sameShape(known, copy)) return copy
    return { $ref: `#/components/schemas/${name}` }
  }
  // A body or response schema's examples move to its media type: the same schema with or without them is one component.
  const sameShape = (a: Record<string, unknown>, b: Record<string, unknown>) => isDeepStrictEqual({ ...a, examples: undefined }, { ...b, examples: undefined })
  for (const section of ['paths', 'webhooks'] as const) if (document[section]) document[section] = visit(document[section])
  document.components.schemas = Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b)))
}

/** `feature_flag`, `error.group` or `logs` in PascalCase, for component and operation names. */
export function pascalCase(name: string): string {
  return name
    .split(/[_.\s-]+/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('')
}

/**
 * Moves the problem responses that several operations share (the same status, codes and headers) into
 * `components.responses`, named by their status and the codes beyond the common ones
 * (`NotFound`, `BadRequestInvalidCursor`): a reader learns them once, and the document stays small.
 */
export function hoistProblemResponses(document: JsonNode, nameFor: (status: number, codes: string[]) => string): void {
  const shared: Record<string, unknown> = (document.components.responses ??= {})
  const nameByContent = new Map<string, string>()
  for (const operations of Object.values(document.paths ?? {}) as JsonNode[]) {
    for (const operation of Object.values(operations)) {
      for (const [status, response] of Object.entries((operation.responses ?? {}) as JsonNode)) {
        const codes: string[] | undefined = response.content?.['application/problem+json']?.schema?.allOf?.[1]?.properties?.code?.enum
        if (!codes) continue
        const content = JSON.stringify(response)
        let name = nameByContent.get(content)
        if (name === undefined) {
          const base = nameFor(Number(status), codes)
          name = base
          for (let n = 2; shared[name] !== undefined; n++) name = `${base}${n}`
          shared[name] = response
          nameByContent.set(content, name)
        }
        operation.responses[status] = { $ref: `#/components/responses/${name}` }
      }
    }
  }
  document.components.responses = Object.fromEntries(Object.entries(shared).sort(([a], [b]) => a.localeCompare(b)))
}
