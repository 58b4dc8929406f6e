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
 * Compiled validators and serializers by schema text, shared by every app the process builds, each compiled
 * when its route first needs it. Compiling every route's schemas up front was half a second of each start
 * (the CLI's and the test suites' hundreds of portals too), mostly for routes the process never serves;
 * the first request of a route pays its own few milliseconds instead.
 */
const compiled = new Map<string, (value: any) => any>()
function onFirstUse<T extends (value: any) => any>(key: () => string, compile: () => T): T & { errors?: unknown } {
  let done: T | undefined
  const run: ((value: unknown) => unknown) & { errors?: unknown } = (value) => {
    if (!done) {
      const text = key()
      done = compiled.get(text) as T | undefined
      if (!done) compiled.set(text, (done = compile()))
    }
    const result = done(value)
    // Fastify reads a failed validation's errors from the function it was given
    run.errors = (done as { errors?: unknown }).errors
    return result
  }
  return run as T & { errors?: unknown }
}

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  onFirstUse(
    () => `validate ${httpPart === 'body' ? 'body' : 'text'} ${JSON.stringify(schema)}`,
    () => (httpPart === 'body' ? strict : coercing).compile(schema as object),
  )

const buildSerializer = SerializerSelector()

/** Fastify's own response serializers (fast-json-stringify), through the cache above. */
export const schemaController: FastifyServerOptions['schemaController'] = {
  compilersFactory: {
    buildSerializer(externalSchemas, options) {
      const compile = buildSerializer(externalSchemas as never, options as never)
      const context = JSON.stringify([externalSchemas, options])
      return (route) => onFirstUse(() => `serialize ${context} ${JSON.stringify(route.schema)}`, () => compile(route as never))
    },
  },
}
