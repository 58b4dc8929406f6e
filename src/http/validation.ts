import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import { Ajv, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify'
import { COMPONENT_NAME } from './openapi-components.ts'

const SHARED: Options = {
  allErrors: false,
  // Unknown query parameters and body fields are refused with a 400 naming them, not silently dropped.
  removeAdditional: false,
  useDefaults: true,
  keywords: ['x-reason', COMPONENT_NAME],
}

function ajvWith(options: Options) {
  const ajv = new Ajv({ ...SHARED, ...options })
  addFormats.default(ajv)
  return ajv
}

// Query strings and path parameters arrive as text, so `limit=5` is coerced to a number; JSON bodies
// carry their own types, and `{"name": 5}` is a wrong type, not the name "5".
const coercing = ajvWith({ coerceTypes: 'array' })
const strict = ajvWith({ coerceTypes: false })

/**
 * Compiled validators and serializers by schema text, shared by every app the process builds. Compiling
 * every route's schemas was 0.4 s of a portal's start, paid again by each of the hundreds of portals the
 * test suites start in their processes; the schemas are the same module-level objects each time.
 */
const compiled = new Map<string, (value: any) => any>()
function once<T extends (value: any) => any>(key: string, compile: () => T): T {
  let done = compiled.get(key)
  if (!done) compiled.set(key, (done = compile()))
  return done as T
}

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  once(`validate ${httpPart === 'body' ? 'body' : 'text'} ${JSON.stringify(schema)}`, () => (httpPart === 'body' ? strict : coercing).compile(schema as object))

const buildSerializer = SerializerSelector()

/** Fastify's own response serializers (fast-json-stringify), through the cache above. */
export const schemaController: FastifyServerOptions['schemaController'] = {
  compilersFactory: {
    buildSerializer(externalSchemas, options) {
      const compile = buildSerializer(externalSchemas as never, options as never)
      const context = JSON.stringify([externalSchemas, options])
      return (route) => once(`serialize ${context} ${JSON.stringify(route.schema)}`, () => compile(route as never))
    },
  },
}
