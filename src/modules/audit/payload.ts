import { Type } from 'typebox'
import { Context, NonNegative, StatusCode, Text } from '../fields.ts'
import type { PayloadExamples } from '../module.ts'

export const AuditPayload = Type.Object(
  {
    actor: Text('who acted: a user, a token, a service'),
    action: Type.Optional(Text('what they did, e.g. project.created')),
    resource: Type.Optional(Text('what they did it to')),
    method: Type.Optional(Text('HTTP method')),
    path: Type.Optional(Text('request path')),
    statusCode: Type.Optional(StatusCode()),
    duration: Type.Optional(NonNegative('milliseconds')),
    ip: Type.Optional(Text()),
    userAgent: Type.Optional(Text()),
    metadata: Type.Optional(Context()),
  },
  { additionalProperties: true, examples: [{ actor: 'alice@example.com', action: 'project.update', resource: 'prj_01JD3Z8Q6R2N5M7K9P4TXYZABC', statusCode: 200, duration: 12.5 }] },
)

export const auditExamples: PayloadExamples<typeof AuditPayload> = {
  valid: { actor: 'alice', action: 'login', statusCode: 200, duration: 12.5 },
  invalid: { data: { action: 'login' }, reason: 'data.actor: required' },
}
