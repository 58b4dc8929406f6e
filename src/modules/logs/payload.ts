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
  { additionalProperties: true, examples: [{ level: 'error', message: 'payment declined for order 1042', module: 'billing', fields: { requestId: 'req_7f3a' } }] },
)

export const logExamples: PayloadExamples<typeof LogPayload> = {
  valid: { level: 'info', message: 'hello', module: 'http', fields: { requestId: 'r1' } },
  invalid: { data: { level: 'info' }, reason: 'data.message: required' },
}
