import { Type } from 'typebox'
import { Context, Text } from '../fields.ts'

export const LogPayload = Type.Object(
  {
    level: Type.Optional(Text('trace, debug, info, warn, error, fatal — or your own')),
    message: Text(),
    module: Type.Optional(Text('the logger or component that wrote it')),
    fields: Type.Optional(Context('key/value context')),
  },
  { additionalProperties: true, examples: [{ level: 'error', message: 'payment declined for order 1042', module: 'billing', fields: { requestId: 'req_7f3a' } }] },
)
