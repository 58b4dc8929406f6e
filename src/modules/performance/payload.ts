import { Type } from 'typebox'
import { Text } from '../fields.ts'
import type { PayloadExamples } from '../module.ts'

export const PerformancePayload = Type.Object(
  {
    service: Type.Optional(Text()),
    metric: Text('e.g. http.server.duration'),
    value: Type.Number(),
    unit: Type.Optional(Text('ms, s, bytes, percent — or your own')),
  },
  { additionalProperties: true, examples: [{ service: 'checkout-api', metric: 'latency', value: 182.5, unit: 'ms' }] },
)

export const performanceExamples: PayloadExamples<typeof PerformancePayload> = {
  valid: { service: 'api', metric: 'http.latency', value: 12.5, unit: 'ms' },
  invalid: { data: { metric: 'http.latency', value: 'fast' }, reason: 'data.value: must be a number' },
}
