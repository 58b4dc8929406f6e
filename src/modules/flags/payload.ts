import { Type } from 'typebox'
import { Text } from '../fields.ts'

export const FeatureFlagPayload = Type.Object(
  {
    key: Text('the flag’s key'),
    enabled: Type.Optional(Type.Boolean()),
    rollout: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'percent of traffic, 0–100' })),
    actor: Type.Optional(Text('who changed it')),
  },
  { additionalProperties: true, examples: [{ key: 'new-checkout', enabled: true, rollout: 25, actor: 'carol' }] },
)
