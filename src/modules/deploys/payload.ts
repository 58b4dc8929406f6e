import { Type } from 'typebox'
import { Text } from '../fields.ts'
import type { PayloadExamples } from '../module.ts'

export const DeployPayload = Type.Object(
  {
    service: Text(),
    version: Type.Optional(Text()),
    environment: Type.Optional(Text('production, staging, …')),
    status: Type.Optional(Text('started, succeeded, failed, rolled_back — or your own')),
    commit: Type.Optional(Text('commit SHA')),
  },
  { additionalProperties: true, examples: [{ service: 'checkout-api', version: '1.2.3', environment: 'production', status: 'succeeded' }] },
)

export const deployExamples: PayloadExamples<typeof DeployPayload> = {
  valid: { service: 'api', version: '1.2.3', environment: 'production', status: 'succeeded' },
  invalid: { data: { version: '1.2.3' }, reason: 'data.service: required' },
}
