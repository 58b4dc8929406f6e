import fs from 'node:fs'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { FastifyInstance } from 'fastify'
import type { TestResponse } from './portal.ts'

/** One response as the checks need it, whether seen by a client or by the server as it leaves. */
export interface SeenResponse {
  method: string
  /** the document's path template (`/api/projects/{id}`), or a concrete path to match against them */
  path: string
  status: number
  header(name: string): string | undefined
  /** the body's text; undefined when it is a stream, which is not read */
  text: string | undefined
}

/**
 * Checks real responses against the live OpenAPI document: the operation of the request's method and
 * path, the entry of its status, the headers that entry declares, its media type, and its body against
 * that entry's schema (with the document's `$ref`s resolved, by Ajv's 2020-12 dialect, as OpenAPI 3.1's
 * schemas are). Returns what does not match, or undefined.
 */
export function documentConformance(document: any) {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  ajv.addSchema({ $id: 'openapi:components', components: document.components })
  // keyed by the schema's text: of ~860 response and header entries only ~110 schemas differ (every
  // route's problem+json answers are one), and compiling is most of what a checker costs
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

  const resolve = (value: any, section: string) => (value?.$ref ? document.components[section][value.$ref.split('/').pop()] : value)

  /** Compiled on first use, once per distinct schema: a test file meets a few of the document's hundred. */
  function validator(schema: unknown) {
    const key = JSON.stringify(schema)
    let validate = compiled.get(key)
    if (!validate) {
      validate = ajv.compile(rebase(schema) as object)
      compiled.set(key, validate)
    }
    return validate
  }

  function check(seen: SeenResponse): string | undefined {
    const { method } = seen
    const found = operationOf(method, seen.path)
    if (!found) return `${method} ${seen.path}: no operation in the document`
    const responses = found.operation.responses
    const entry = resolve(responses[String(seen.status)] ?? responses[`${String(seen.status)[0]}XX`] ?? responses.default, 'responses')
    if (!entry) return `${method} ${found.template} answered ${seen.status}, which the document does not list`
    const where = `${method} ${found.template} ${seen.status}`

    const headerProblems: string[] = []
    for (const [name, declared] of Object.entries<any>(entry.headers ?? {})) {
      const header = resolve(declared, 'headers')
      const value = seen.header(name)
      if (value === undefined) {
        if (header.required) headerProblems.push(`header ${name} is required but was not sent`)
        continue
      }
      const schema = header.schema ?? {}
      const typed = schema.type === 'integer' || schema.type === 'number' ? Number(value) : schema.type === 'boolean' ? value === 'true' ? true : value === 'false' ? false : value : value
      const validate = validator(schema)
      if (!validate(typed)) headerProblems.push(`header ${name}: ${JSON.stringify(value)} ${ajv.errorsText(validate.errors)}`)
    }
    if (headerProblems.length > 0) return `${where}: ${headerProblems.join('; ')}`

    if (!entry.content) return seen.text === '' || seen.text === undefined ? undefined : `${where}: a body the document does not describe`
    const contentType = seen.header('content-type') ?? ''
    const mediaType = Object.keys(entry.content).find((type) => contentType.split(';')[0].trim() === type)
    if (!mediaType) return `${where}: ${contentType || 'no content-type'} is not among ${Object.keys(entry.content).join(', ')}`
    if (seen.text === undefined) return undefined
    const schema = entry.content[mediaType].schema
    if (!schema) return undefined
    let body: unknown = seen.text
    if (/[/+]json$/.test(mediaType)) {
      try {
        body = JSON.parse(seen.text)
      } catch {
        return `${where} ${mediaType}: the body is not JSON`
      }
    } else if (schema.type !== 'string') {
      return undefined // a binary body (protobuf) that the schema describes only by its media type
    }
    const validate = validator(schema)
    return validate(body) ? undefined : `${where} ${mediaType}: ${ajv.errorsText(validate.errors)}`
  }

  /** What is wrong with `value` as an instance of `schema` (a schema of the document, `$ref`s and all), or undefined. */
  function against(schema: unknown, value: unknown): string | undefined {
    const validate = ajv.compile(rebase(schema) as object)
    return validate(value) ? undefined : ajv.errorsText(validate.errors)
  }

  /** The check of a response a test client received. */
  function mismatch(method: string, url: string, response: TestResponse): string | undefined {
    return check({ method, path: url, status: response.status, header: (name) => response.headers.get(name) ?? undefined, text: response.text })
  }
  return Object.assign(mismatch, { check, against })
}

/** The document's `#/components/…` refs, pointed at the components schema added under its own id. */
function rebase(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebase)
  if (typeof schema !== 'object' || schema === null) return schema
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `openapi:components${value}` : rebase(value)]),
  )
}

/** Counts of this test process, written to OPENAPI_CONFORMANCE_LOG (one JSON line per process) when it is set. */
export const conformanceCounts = { validated: 0, bodiesNotRead: 0, outsideDocument: 0, mismatches: 0 }
process.once('exit', () => {
  const file = process.env.OPENAPI_CONFORMANCE_LOG
  if (file && conformanceCounts.validated + conformanceCounts.outsideDocument > 0) {
    fs.appendFileSync(file, JSON.stringify({ file: process.argv[1], ...conformanceCounts }) + '\n')
  }
})

// One checker per distinct document: a process that starts many portals compiles each schema once.
const checkers = new Map<string, ReturnType<typeof documentConformance>>()

/**
 * Checks every response the portal sends, as it leaves (Fastify's last `onSend`), against the
 * portal's own live document, and hands each mismatch to `onMismatch`. Routes outside the document
 * (the UI's files, the API reference, the catch-all 404) are counted, not checked; a documented
 * route's 404 is checked.
 */
export function checkEveryResponse(app: FastifyInstance, onMismatch: (mismatch: string) => void) {
  let checker: ReturnType<typeof documentConformance> | undefined
  app.addHook('onReady', async () => {
    const text = JSON.stringify((app as unknown as { swagger(): unknown }).swagger())
    checker = checkers.get(text)
    if (!checker) {
      checker = documentConformance(JSON.parse(text))
      checkers.set(text, checker)
    }
  })
  app.addHook('onSend', async (request, reply, payload) => {
    const template = request.routeOptions.url
    if (request.method === 'HEAD' || request.method === 'OPTIONS' || template === undefined || request.routeOptions.schema?.hide || template === '/*') {
      conformanceCounts.outsideDocument++
      return payload
    }
    if (!checker) {
      const document = (app as unknown as { swagger(): unknown }).swagger()
      const text = JSON.stringify(document)
      checker = checkers.get(text) ?? documentConformance(JSON.parse(text))
      checkers.set(text, checker)
    }
    let text: string | undefined
    // Fastify drops a 204's or 304's body on the wire whatever the handler returned
    if (payload === null || payload === undefined || reply.statusCode === 204 || reply.statusCode === 304) text = ''
    else if (typeof payload === 'string') text = payload
    else if (Buffer.isBuffer(payload)) text = payload.toString('utf8')
    else conformanceCounts.bodiesNotRead++
    const header = (name: string) => {
      const value = reply.getHeader(name)
      return value === undefined ? undefined : Array.isArray(value) ? value.join(', ') : String(value)
    }
    const found = checker.check({ method: request.method, path: template.replace(/:([A-Za-z0-9_]+)/g, '{$1}'), status: reply.statusCode, header, text })
    conformanceCounts.validated++
    if (found) {
      conformanceCounts.mismatches++
      onMismatch(`${found}\n  request: ${request.method} ${request.url}\n  body: ${(text ?? '(stream)').slice(0, 600)}`)
    }
    return payload
  })
}
