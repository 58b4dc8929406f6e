import { Type } from 'typebox'
import { Text } from '../fields.ts'
import type { PayloadExamples } from '../module.ts'

export const FeatureFlagPayload = Type.Object(
  {
    key: Text('the flag’s key'),
    enabled: Type.Optional(Type.Boolean()),
    rollout: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'percent of traffic, 0–100' })),
    actor: Type.Optional(Text('who changed it')),
  },
  { additionalProperties: true, examples: [{ key: 'new-checkout', enabled: true, rollout: 25, actor: 'carol' }] },
)

export const featureFlagExamples: PayloadExamples<typeof FeatureFlagPayload> = {
  valid: { key: 'new-checkout', enabled: true, rollout: 25 },
  invalid: { data: { key: 'new-checkout', rollout: 101 }, reason: 'data.rollout: must be at most 100' },
}
