import { Type } from 'typebox'
import { HttpUrl, StatusCode, Text } from '../modules/fields.ts'
import type { PayloadExamples } from '../modules/module.ts'

/** A `webhook` event: a delivery attempt that an integration made and reports here. */
export const WebhookAttemptPayload = Type.Object(
  {
    destination: Type.Optional(Text('destination name')),
    url: HttpUrl(),
    statusCode: Type.Optional(StatusCode()),
    attempt: Type.Optional(Type.Integer({ minimum: 1, description: 'attempt number, from 1' })),
  },
  { additionalProperties: true, examples: [{ destination: 'billing', url: 'https://hooks.example.com/billing', statusCode: 200, attempt: 1 }] },
)

export const webhookAttemptExamples: PayloadExamples<typeof WebhookAttemptPayload> = {
  valid: { destination: 'billing', url: 'https://hooks.example.com/x', statusCode: 200, attempt: 1 },
  invalid: { data: { url: 'https://hooks.example.com/x', attempt: 0 }, reason: 'data.attempt: must be at least 1' },
}
