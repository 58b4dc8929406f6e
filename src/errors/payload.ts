import { Type } from 'typebox'
import { Text } from '../modules/fields.ts'

/** An `error` event from ingest: an exception without a stack (capture takes the richer shape). */
export const ErrorPayload = Type.Object(
  {
    name: Type.Optional(Text('exception name, e.g. TypeError')),
    message: Type.Optional(Text()),
    release: Type.Optional(Text()),
    environment: Type.Optional(Text()),
  },
  { additionalProperties: true, examples: [{ name: 'TypeError', message: 'cart is undefined', environment: 'production', release: '1.2.3' }], description: 'At least one of name and message is required.' },
)
