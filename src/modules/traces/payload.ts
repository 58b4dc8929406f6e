import { Type } from 'typebox'
import { NonNegative, Text } from '../fields.ts'
import type { PayloadExamples } from '../module.ts'

export const TracePayload = Type.Object(
  {
    traceId: Text(),
    spanId: Text(),
    parentSpanId: Type.Optional(Text('absent on the root span')),
    serviceName: Type.Optional(Text()),
    name: Type.Optional(Text('operation name')),
    durationMs: Type.Optional(NonNegative('milliseconds')),
  },
  { additionalProperties: true, examples: [{ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', serviceName: 'checkout-api', name: 'GET /cart', durationMs: 42 }] },
)

export const traceExamples: PayloadExamples<typeof TracePayload> = {
  valid: { traceId: 't1', spanId: 's1', serviceName: 'api', name: 'GET /', durationMs: 5 },
  invalid: { data: { traceId: 't1', spanId: 's1', durationMs: -1 }, reason: 'data.durationMs: must be at least 0' },
}
