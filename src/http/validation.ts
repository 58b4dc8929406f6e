import { Ajv, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'
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

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? strict : coercing).compile(schema as object)
