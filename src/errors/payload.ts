import { Type } from 'typebox'
import { Text } from '../modules/fields.ts'
import type { PayloadExamples } from '../modules/module.ts'

/** An `error` event from ingest: an exception without a stack (capture takes the richer shape). */
export const ErrorPayload = Type.Object(
  {
    name: Type.Optional(Text('exception name, e.g. TypeError')),
    message: Type.Optional(Text()),
    release: Type.Optional(Text()),
    environment: Type.Optional(Text()),
  },
  { additionalProperties: true, description: 'At least one of name and message is required.' },
)

export const errorExamples: PayloadExamples<typeof ErrorPayload> = {
  valid: { name: 'TypeError', message: 'x is undefined', environment: 'production' },
  invalid: { data: { release: '1.0' }, reason: 'data.name: required when data.message is absent' },
}
