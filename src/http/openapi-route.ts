import type { Access } from './auth.ts'
import { nameOf, type JsonNode } from './openapi-components.ts'
import { PROBLEM_CODES, Problem, ROUTE_PROBLEM_CODES, problemTitle } from './problem.ts'
import { exampleOf } from './schema-example.ts'

type Schema = JsonNode

/** The security requirement and role of each kind of route access (see `config.access` in auth.ts). */
const SECURITY: Record<Access, { security: Record<string, string[]>[]; role?: 'admin' | 'viewer' }> = {
  public: { security: [] },
  any: { security: [{ accessToken: [] }, { apiKey: [] }] },
  apiKey: { security: [{ apiKey: [] }] },
  read: { security: [{ accessToken: [] }], role: 'viewer' },
  admin: { security: [{ accessToken: [] }], role: 'admin' },
}

const ROLE_NOTES = {
  admin: 'Requires an **admin** access token (`x-required-role: admin`); a viewer token gets 403 `admin_required`.',
  viewer: 'Takes any access token, viewer or admin (`x-required-role: viewer`).',
}

/**
 * What the document says about one route beyond its own schema, derived so that a route added later
 * gets it without asking: its security and required role from `config.access`, the problem codes
 * each error status can carry, a description and an example for every success response and request
 * body. The route's schema itself is left as it is: validation and serialisation never see this.
 */
export function documentRoute(schema: Schema, access: Access = 'admin'): Schema {
  const { security, role } = SECURITY[access]
  const documented: Schema = { ...schema, security: schema.security ?? security }
  if (role) {
    documented['x-required-role'] = role
    documented.description = [schema.description, ROLE_NOTES[role]].filter(Boolean).join('\n\n')
  }
  if (schema.body) documented.body = withExample(schema.body)
  const facts = { access, hasBody: schema.body !== undefined, hasCursor: schema.querystring?.properties?.cursor !== undefined }
  documented.response = Object.fromEntries(
    Object.entries((schema.response ?? {}) as Record<string, Schema>).map(([status, entry]) => [
      status,
      isProblem(entry) ? problemEntry(Number(status), entry, facts) : successEntry(Number(status), entry, schema.summary),
    ]),
  )
  return documented
}

function isProblem(entry: Schema): boolean {
  return entry.content?.['application/problem+json'] !== undefined
}

/** A problem response whose `code` lists what it can carry: the route's own codes and those any such route can. */
function problemEntry(status: number, entry: Schema, facts: { access: Access; hasBody: boolean; hasCursor: boolean }): Schema {
  const own: string[] = entry[ROUTE_PROBLEM_CODES] ?? []
  const applies = (arises: string) =>
    arises === 'every' ||
    (arises === 'body' && facts.hasBody) ||
    (arises === 'cursor' && facts.hasCursor) ||
    (arises.startsWith('access:') && arises.slice('access:'.length).split(',').includes(facts.access))
  const common = Object.entries(PROBLEM_CODES)
    .filter(([, code]) => code.status === status && applies(code.arises))
    .map(([name]) => name)
  let codes = [...new Set([...own, ...common])]
  if (codes.length === 0) codes = Object.entries(PROBLEM_CODES).filter(([, code]) => code.status === status).map(([name]) => name)
  const { [ROUTE_PROBLEM_CODES]: _own, ...rest } = entry
  const codeSchema = codes.length > 0 ? { type: 'string', enum: codes } : { type: 'string' }
  return {
    ...rest,
    content: {
      // another API's own error shape beside the portal's (the Loki, Tempo and Prometheus query APIs answer in theirs)
      ...rest.content,
      'application/problem+json': {
        schema: { allOf: [Problem, { type: 'object', properties: { code: codeSchema } }] },
        example: { type: 'about:blank', title: problemTitle(status), status, detail: `${codes[0]}: the \`detail\` names the field or header at fault`, code: codes[0] },
      },
    },
  }
}

/** A success response with a description and an example, in OpenAPI's own response shape. */
function successEntry(status: number, entry: Schema, summary: string | undefined): Schema {
  if (entry.content) {
    const content = Object.fromEntries(
      Object.entries(entry.content as Record<string, Schema>).map(([mediaType, media]) => [mediaType, withMediaExample(media)]),
    )
    return { ...entry, description: entry.description ?? summary ?? 'Success', content }
  }
  const description = entry.description ?? describedBy(entry) ?? summary ?? 'Success'
  if (status === 204 || entry.type === 'null') return { description, type: 'null' }
  return { description, content: { 'application/json': withMediaExample({ schema: entry }) } }
}

function describedBy(schema: Schema): string | undefined {
  return nameOf(schema) === undefined ? schema.description : undefined
}

function withMediaExample(media: Schema): Schema {
  if (media.example !== undefined || media.examples !== undefined) return media
  return { ...media, example: exampleOf(media.schema) }
}

function withExample(body: Schema): Schema {
  if (Array.isArray(body.examples) && body.examples.length > 0) return body
  return { ...body, examples: [exampleOf(body)] }
}
