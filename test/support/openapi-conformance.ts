import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { TestResponse } from './portal.ts'

/**
 * Checks real responses against the live OpenAPI document: the operation of the request's method and
 * path, the entry of its status, its media type, and its body against that entry's schema (with the
 * document's `$ref`s resolved). Returns what does not match, or undefined.
 */
export function documentConformance(document: any) {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  ajv.addSchema({ $id: 'openapi:components', components: document.components })
  const compiled = new Map<string, ValidateFunction>()
  const templates = Object.keys(document.paths).map((template) => ({
    template,
    regex: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+').replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }))

  function operationOf(method: string, url: string) {
    const path = url.split('?')[0]
    const exact = document.paths[path]?.[method.toLowerCase()]
    if (exact) return { template: path, operation: exact }
    for (const { template, regex } of templates) {
      const operation = document.paths[template][method.toLowerCase()]
      if (operation && regex.test(path)) return { template, operation }
    }
    return undefined
  }

  return function mismatch(method: string, url: string, response: TestResponse): string | undefined {
    const found = operationOf(method, url)
    if (!found) return `${method} ${url}: no operation in the document`
    let entry = found.operation.responses[String(response.status)]
    if (!entry) return `${method} ${found.template} answered ${response.status}, which the document does not list`
    if (entry.$ref) entry = document.components.responses[entry.$ref.split('/').pop()]
    if (!entry.content) return response.text === '' ? undefined : `${method} ${found.template} ${response.status}: a body the document does not describe`
    const contentType = response.headers.get('content-type') ?? ''
    const mediaType = Object.keys(entry.content).find((type) => contentType.startsWith(type))
    if (!mediaType) return `${method} ${found.template} ${response.status}: ${contentType} is not among ${Object.keys(entry.content).join(', ')}`
    const key = `${method} ${found.template} ${response.status} ${mediaType}`
    let validate = compiled.get(key)
    if (!validate) {
      validate = ajv.compile(rebase(entry.content[mediaType].schema) as object)
      compiled.set(key, validate)
    }
    return validate(response.body) ? undefined : `${key}: ${ajv.errorsText(validate.errors)}`
  }
}

/** The document's `#/components/…` refs, pointed at the components schema added under its own id. */
function rebase(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebase)
  if (typeof schema !== 'object' || schema === null) return schema
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `openapi:components${value}` : rebase(value)]),
  )
}
