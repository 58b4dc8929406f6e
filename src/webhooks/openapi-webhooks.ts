import { Type, type TSchema } from 'typebox'
import { named } from '../http/openapi-components.ts'
import { exampleOf } from '../http/schema-example.ts'
import type { NotificationType } from '../notifications.ts'
import { AlertNotification } from '../alerts/schemas.ts'

const Time = (description: string) => Type.String({ format: 'date-time', description })

const ErrorGroupNotification = named(
  'ErrorGroupNotification',
  Type.Object({
    fingerprint: Type.String({ description: 'the group’s primary fingerprint' }),
    name: Type.String(),
    message: Type.String(),
    status: Type.String({ description: 'unresolved after a regression or when an ignore condition was reached' }),
    count: Type.Integer({ description: 'occurrences so far' }),
    firstSeen: Time('first occurrence'),
    lastSeen: Time('latest occurrence'),
  }),
)

/** The `data` of each notification the portal sends on its own (src/notifications.ts). */
const NOTIFICATION_DATA: Record<NotificationType, { summary: string; data: TSchema }> = {
  'error.group.created': { summary: 'A new error group opened', data: ErrorGroupNotification },
  'error.group.regressed': { summary: 'An occurrence reopened a resolved error group', data: ErrorGroupNotification },
  'error.group.unignored': { summary: 'An ignored error group reached its condition (a count or a time) and is unresolved again', data: ErrorGroupNotification },
  'deploy.failed': {
    summary: 'A deploy event with status failed arrived',
    data: named(
      'DeployFailedNotification',
      Type.Object(
        { eventId: Type.String({ description: 'evt_… of the deploy event' }), ts: Time('when the deploy happened'), service: Type.String() },
        { additionalProperties: true, description: 'The deploy event’s payload, with its id and time.' },
      ),
    ),
  },
  'endpoint.disabled': {
    summary: 'An endpoint was disabled after failing too long, or answering 410 Gone',
    data: named(
      'EndpointDisabledNotification',
      Type.Object({
        endpointId: Type.String({ description: 'whe_…' }),
        url: Type.String({ format: 'uri' }),
        reason: Type.Union([Type.Literal('gone'), Type.Literal('failing')]),
        detail: Type.String(),
        disabledAt: Time('when it was disabled'),
      }),
    ),
  },
}

const SIGNATURE_HEADERS = [
  { name: 'webhook-id', description: 'the message id (msg_…); the same on every retry, so receivers can drop duplicates', example: 'msg_01JD3Z8Q6R2N5M7K9P4TXYZABC' },
  { name: 'webhook-timestamp', description: 'Unix seconds when this attempt was signed; refuse old ones to stop replays', example: '1795458600' },
  {
    name: 'webhook-signature',
    description: 'Standard Webhooks: `v1,<base64 HMAC-SHA256 of id.timestamp.body>` per current secret, space-separated during a rotation',
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  },
].map(({ name, description, example }) => ({ name, in: 'header', required: true, description, schema: { type: 'string' }, example }))

const RECEIVER_RESPONSES = {
  '2XX': { description: 'Received: the delivery succeeds.' },
  default: { description: 'Anything else, a timeout or a network error fails the attempt; the next follows WEBHOOK_RETRY_SCHEDULE (a `Retry-After` is honoured). 410 Gone disables the endpoint.' },
}

function messageBody(type: string, data: TSchema, description: string) {
  return Type.Object(
    {
      id: Type.String({ description: 'msg_… message id, also in `webhook-id`' }),
      type: Type.Literal(type, { description: 'the event type' }),
      timestamp: Time('when the message was created'),
      data,
    },
    { description },
  )
}

/**
 * The `webhooks` section of the document: what the portal POSTs to a generic endpoint. Slack and
 * Discord endpoints get the same message rendered for those services instead.
 */
export function outgoingWebhooks(): Record<string, unknown> {
  const webhooks: Record<string, unknown> = {
    message: operation(
      'receiveWebhookMessage',
      'A message sent through POST /api/webhooks/deliver',
      'What a generic endpoint receives for each message: `type` is the `eventType` given to deliver, `data` its `payload`. ' +
        'Signed with the endpoint’s secret as Standard Webhooks, verifiable with the `standardwebhooks` library.',
      named('WebhookMessage', messageBody('invoice.paid', Type.Record(Type.String(), Type.Unknown(), { description: 'the `payload` given to deliver', examples: [{ invoiceId: 'inv_42', amount: 1200 }] }), 'A delivered message.')),
    ),
  }
  for (const [type, { summary, data }] of Object.entries(NOTIFICATION_DATA)) {
    webhooks[type] = operation(
      `receive${type.replace(/(^|[.])([a-z])/g, (_m, _s, letter: string) => letter.toUpperCase())}Notification`,
      summary,
      `The portal’s own notification \`${type}\`, sent to endpoints subscribed to it (their \`eventTypes\`), signed like every message.`,
      messageBody(type, data, `The \`${type}\` notification.`),
    )
  }
  for (const [type, summary] of Object.entries(ALERT_NOTIFICATIONS)) {
    webhooks[type] = operation(
      `receive${type.replace(/(^|[.])([a-z])/g, (_m, _s, letter: string) => letter.toUpperCase())}Notification`,
      summary,
      `Sent to the endpoints an alert rule targets (its \`targets.endpointIds\`), once per transition however many portals run, unless a silence holds it back. Slack and Discord endpoints get \`headline\`, the link and the top contributors rendered for them.`,
      messageBody(type, AlertNotification, `The \`${type}\` notification.`),
    )
  }
  return webhooks
}

/** The alert notifications (src/alerts/notification.ts). */
const ALERT_NOTIFICATIONS = {
  'alert.firing': 'An alert rule’s series started firing, changed severity, or is still firing at its repeat interval',
  'alert.resolved': 'A firing alert resolved (sent when the rule’s `targets.sendResolved`)',
  'alert.error': 'An alert rule’s evaluation failed; it is retried at each interval',
}

function operation(operationId: string, summary: string, description: string, body: TSchema) {
  return {
    post: {
      operationId,
      summary,
      description,
      tags: ['webhooks'],
      security: [],
      parameters: SIGNATURE_HEADERS,
      requestBody: { required: true, content: { 'application/json': { schema: body, example: exampleOf(body) } } },
      responses: RECEIVER_RESPONSES,
    },
  }
}
