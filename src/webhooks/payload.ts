import { Type } from 'typebox'
import { HttpUrl, StatusCode, Text } from '../modules/fields.ts'

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
