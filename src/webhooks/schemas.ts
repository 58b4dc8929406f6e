import { Type } from 'typebox'
import { named } from '../http/openapi-components.ts'

const Time = (description?: string) => Type.String({ format: 'date-time', description })
const NullableTime = (description?: string) => Type.Union([Time(), Type.Null()], { description })

export const EventTypeName = (description = 'an event type name, e.g. invoice.paid or error.group.created') =>
  Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,100}$', description, examples: ['invoice.paid'] })

export const EndpointKindSchema = Type.Union([Type.Literal('generic'), Type.Literal('slack'), Type.Literal('discord')], {
  description:
    'generic: the Standard Webhooks body `{ id, type, timestamp, data }`; slack: `{ text, blocks }` for a Slack incoming webhook; ' +
    'discord: `{ content, embeds }` for a Discord webhook. Every kind is signed the same way.',
})

export const EndpointUrl = Type.String({
  pattern: '^https?://[^\\s/?#]+[^\\s]*$',
  maxLength: 2048,
  examples: ['https://hooks.example.com/portal'],
  description:
    'absolute http(s) URL. Redirects are not followed. Unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true, an attempt whose address (after DNS) is loopback, private, ' +
    'link-local or reserved — in any IPv4, IPv6, IPv4-mapped, NAT64 or 6to4 form — is refused and recorded with status `refused`.',
})

export const EventTypes = Type.Array(EventTypeName(), {
  maxItems: 100,
  uniqueItems: true,
  description: 'the event types the endpoint takes; empty (the default) means every type, the portal’s own notifications included',
})

export const Endpoint = named('Endpoint', Type.Object({
  id: Type.String({ description: 'whe_…' }),
  projectId: Type.String({ description: 'prj_…' }),
  url: Type.String({ description: 'where messages are POSTed', examples: ['https://hooks.example.com/portal'] }),
  kind: EndpointKindSchema,
  description: Type.String({ description: 'for people; not sent' }),
  eventTypes: Type.Array(Type.String(), { description: 'the event types it takes; empty: every type' }),
  enabled: Type.Boolean({ description: 'false: nothing is delivered to it' }),
  disabledReason: Type.Union([Type.Literal('gone'), Type.Literal('failing'), Type.Literal('manual'), Type.Null()], {
    description: 'gone: it answered 410; failing: every attempt failed for WEBHOOK_DISABLE_AFTER_FAILING_SECONDS; manual: PATCH enabled=false',
  }),
  disabledAt: NullableTime(),
  failingSince: NullableTime('start of the current run of failed attempts; null after a success'),
  createdAt: Time(),
  updatedAt: Time(),
}, { description: 'A webhook endpoint (never its secret).' }))

export const NewSecret = {
  secret: Type.String({ description: 'whsec_… (Standard Webhooks form); shown in this response only' }),
  secretId: Type.String({ description: 'whs_…: the secret version; attempts name the version that signed them' }),
}

export const DeliveryStatusSchema = Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')], {
  description: 'pending until an attempt succeeds (succeeded) or the last attempt fails, a 410 arrives or the endpoint is disabled (failed)',
})

export const AttemptStatusSchema = Type.Union(
  [
    Type.Literal('in_progress'),
    Type.Literal('succeeded'),
    Type.Literal('failed'),
    Type.Literal('timeout'),
    Type.Literal('network_error'),
    Type.Literal('refused'),
    Type.Literal('interrupted'),
  ],
  {
    description:
      'in_progress: recorded before the request left, no outcome yet; succeeded: 2xx; failed: any other answer; timeout: no full answer within WEBHOOK_TIMEOUT_MS; ' +
      'network_error: connection failed or reset; refused: the SSRF guard; interrupted: the portal instance sending it stopped (a crash) before recording an outcome — ' +
      'the receiver may have got it; it counts as an attempt and the next one follows once its lease runs out',
  },
)

export const EnqueuedDelivery = named(
  'EnqueuedDelivery',
  Type.Object({ id: Type.String({ description: 'dlv_…' }), endpointId: Type.String({ description: 'whe_…' }), status: DeliveryStatusSchema }, { description: 'A delivery just enqueued.' }),
)

export const DeliverySummary = named('Delivery', Type.Object({
  id: Type.String({ description: 'dlv_…' }),
  projectId: Type.String({ description: 'prj_…' }),
  endpointId: Type.String({ description: 'whe_…' }),
  messageId: Type.String({ description: 'msg_…; sent as `webhook-id`, the same on every attempt' }),
  eventType: Type.String({ description: 'the message’s event type' }),
  status: DeliveryStatusSchema,
  attemptCount: Type.Integer({ description: 'attempts made so far' }),
  endpointUrl: Type.String({ description: 'the endpoint’s URL now (a deleted endpoint’s last URL)' }),
  lastStatusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'the HTTP status of the latest attempt; null before the first answer or when nothing answered' }),
  nextAttemptAt: NullableTime('when the next attempt is due; null once the delivery has ended'),
  createdAt: Time(),
  updatedAt: Time(),
}, { description: 'One message’s delivery to one endpoint.' }))

export const Attempt = named('Attempt', Type.Object({
  id: Type.String({ description: 'att_…' }),
  number: Type.Integer({ minimum: 1, description: '1 for the first attempt' }),
  status: AttemptStatusSchema,
  startedAt: Time(),
  durationMs: Type.Integer({ description: 'until the answer or the failure; 0 while in_progress and for an interrupted attempt' }),
  request: Type.Object({
    url: Type.String({ description: 'the endpoint URL at the time' }),
    method: Type.String({ description: 'POST' }),
    headers: Type.Record(Type.String(), Type.String(), { description: 'as sent, `webhook-signature` included' }),
    bodySize: Type.Integer({ description: 'bytes sent' }),
    bodySha256: Type.String({ description: 'hex SHA-256 of the body sent' }),
  }, { description: 'what was sent' }),
  response: Type.Union([
    Type.Object({ statusCode: Type.Integer(), headers: Type.Record(Type.String(), Type.String()), body: Type.String({ description: 'the first 4 KiB' }) }),
    Type.Null(),
  ], { description: 'what came back; null when nothing did' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'why the attempt failed without an answer' }),
  secretId: Type.Union([Type.String(), Type.Null()], {
    description: 'the newest secret version that signed it; during a rotation grace period the previous version’s signature is in the header too',
  }),
}, { description: 'One HTTP attempt of a delivery.' }))

export const DeliveryDetail = named('DeliveryDetail', Type.Object({
  ...DeliverySummary.properties,
  payload: Type.Record(Type.String(), Type.Unknown(), { description: 'the message payload (`data` of a generic body)' }),
  attempts: Type.Array(Attempt, { description: 'every attempt, oldest first' }),
}, { description: 'A delivery with its payload and every attempt.' }))
