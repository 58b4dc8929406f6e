import { Type } from 'typebox'
import { Text } from '../fields.ts'
import type { PayloadExamples } from '../module.ts'

export const ConfigPayload = Type.Object(
  {
    path: Text('the configuration file’s path'),
    diff: Type.Optional(Text('unified diff of the change')),
    actor: Type.Optional(Text('who changed it')),
  },
  { additionalProperties: true, examples: [{ path: 'config/app.yaml', diff: '--- a\n+++ b\n-timeout: 5\n+timeout: 10', actor: 'bob' }] },
)

export const configExamples: PayloadExamples<typeof ConfigPayload> = {
  valid: { path: 'config/app.yaml', diff: '--- a\n+++ b\n', actor: 'bob' },
  invalid: { data: { diff: '--- a\n+++ b\n' }, reason: 'data.path: required' },
}
