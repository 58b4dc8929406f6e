import { Type } from 'typebox'
import { CurrencyCode, Text, YearMonth } from '../fields.ts'
import type { PayloadExamples } from '../module.ts'

export const CostPayload = Type.Object(
  {
    provider: Type.Optional(Text('aws, gcp, azure — or your own')),
    service: Type.Optional(Text()),
    region: Type.Optional(Text()),
    amount: Type.Number({ description: 'decimal amount in `currency`' }),
    currency: CurrencyCode(),
    period: Type.Optional(YearMonth()),
  },
  { additionalProperties: true, examples: [{ provider: 'aws', service: 'ec2', amount: 12.34, currency: 'USD', period: '2026-10' }] },
)

export const costExamples: PayloadExamples<typeof CostPayload> = {
  valid: { provider: 'aws', service: 'ec2', amount: 12.34, currency: 'USD', period: '2026-10' },
  invalid: { data: { amount: 1, currency: 'usd' }, reason: 'data.currency: must be three upper-case letters (ISO 4217)' },
}
