import { Type } from 'typebox'
import { Text } from '../fields.ts'

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
