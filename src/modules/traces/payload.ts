import { Type } from 'typebox'
import { NonNegative, Text } from '../fields.ts'

export const TracePayload = Type.Object(
  {
    traceId: Text(),
    spanId: Text(),
    parentSpanId: Type.Optional(Text('absent on the root span')),
    serviceName: Type.Optional(Text()),
    name: Type.Optional(Text('operation name')),
    durationMs: Type.Optional(NonNegative('milliseconds')),
  },
  { additionalProperties: true },
)
