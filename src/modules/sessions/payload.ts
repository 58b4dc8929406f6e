import { Type } from 'typebox'
import { Text } from '../fields.ts'
import type { PayloadExamples } from '../module.ts'

const Count = (description: string) => Type.Optional(Type.Integer({ minimum: 0, description }))

/** The end states a session reports, from healthy to worst; a session counts as the worst it reported. */
export const SESSION_STATUSES = ['ok', 'exited', 'errored', 'abnormal', 'crashed'] as const

/**
 * A release-health session: one update of one session (Sentry's `session` item, `sessionId` set), or
 * sessions counted by how they ended in one time bucket (Sentry's `sessions` item, request-mode SDKs).
 */
export const SessionPayload = Type.Object(
  {
    release: Text('the release the session ran'),
    environment: Type.Optional(Text('production, staging, …')),
    started: Type.String({ format: 'date-time', description: 'when the session started (an aggregate: its bucket’s start)' }),
    distinctId: Type.Optional(Text('the user: counted for crash-free users and adoption')),
    sessionId: Type.Optional(Text('one session’s id (`sid`): its updates count as one session, in the worst state it reported')),
    status: Type.Optional(Type.Union([Type.Literal('ok'), Type.Literal('exited'), Type.Literal('errored'), Type.Literal('abnormal'), Type.Literal('crashed')], { description: 'required with sessionId: ok (running), exited, errored, abnormal or crashed' })),
    errors: Count('errors seen in the session; above 0 it counts as errored'),
    init: Type.Optional(Type.Boolean({ description: 'the session’s first update' })),
    duration: Type.Optional(Type.Number({ minimum: 0, description: 'seconds' })),
    exited: Count('aggregate: sessions that ended normally'),
    errored: Count('aggregate: sessions that ended with a handled error'),
    abnormal: Count('aggregate: sessions that ended abruptly without a crash'),
    crashed: Count('aggregate: sessions that crashed'),
  },
  {
    additionalProperties: true,
    description: 'Either sessionId and status (one session’s update) or counts (exited, errored, abnormal, crashed) of sessions that started in one bucket.',
    examples: [{ release: 'shop@1.4.2', environment: 'production', started: '2024-11-23T19:26:00.000Z', sessionId: '7c7b6585-f901-4351-bf8d-02711b721929', distinctId: 'u-42', status: 'exited', errors: 0 }],
  },
)

export const sessionExamples: PayloadExamples<typeof SessionPayload> = {
  valid: { release: 'shop@1.4.2', environment: 'production', started: '2024-11-23T19:26:00.000Z', sessionId: 's-1', status: 'crashed', errors: 1 },
  invalid: { data: { release: 'shop@1.4.2', started: '2024-11-23T19:26:00.000Z', sessionId: 's-1' }, reason: 'data.status: required when data.sessionId is set' },
}

/** The cross-field rule of a session: an update names its state, an aggregate counts at least one session. */
export function checkSession(data: { sessionId?: string; status?: string; exited?: number; errored?: number; abnormal?: number; crashed?: number }): string | undefined {
  if (data.sessionId !== undefined) return data.status === undefined ? 'data.status: required when data.sessionId is set' : undefined
  if (data.status !== undefined) return 'data.sessionId: required when data.status is set'
  const counted = (data.exited ?? 0) + (data.errored ?? 0) + (data.abnormal ?? 0) + (data.crashed ?? 0)
  return counted > 0 ? undefined : 'data.sessionId: required, or a count (exited, errored, abnormal, crashed) above 0'
}
