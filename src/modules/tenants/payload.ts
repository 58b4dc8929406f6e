import { Type } from 'typebox'
import { Text } from '../fields.ts'
import type { PayloadExamples } from '../module.ts'

export const TenantPayload = Type.Object(
  {
    projectId: Type.Optional(Text('the project it describes; the sending project when absent')),
    plan: Text('free, team, enterprise — or your own'),
    ingestLimitPerSecond: Type.Optional(
      Type.Integer({ minimum: 1, description: 'events per second; lowers the project’s ingest limit, never above the install’s' }),
    ),
  },
  { additionalProperties: true, examples: [{ plan: 'team', ingestLimitPerSecond: 500 }] },
)

export const tenantExamples: PayloadExamples<typeof TenantPayload> = {
  valid: { plan: 'enterprise', ingestLimitPerSecond: 100_000 },
  invalid: { data: { plan: 'team', ingestLimitPerSecond: 0 }, reason: 'data.ingestLimitPerSecond: must be at least 1' },
}
