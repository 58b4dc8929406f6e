import { Type } from 'typebox'
import { Context, Text } from '../fields.ts'
import type { PayloadExamples } from '../module.ts'

export const LogPayload = Type.Object(
  {
    level: Type.Optional(Text('trace, debug, info, warn, error, fatal — or your own')),
    message: Text(),
    module: Type.Optional(Text('the logger or component that wrote it')),
    fields: Type.Optional(Context('key/value context')),
  },
  { additionalProperties: true },
)

export const logExamples: PayloadExamples<typeof LogPayload> = {
  valid: { level: 'info', message: 'hello', module: 'http', fields: { requestId: 'r1' } },
  invalid: { data: { level: 'info' }, reason: 'data.message: required' },
}
