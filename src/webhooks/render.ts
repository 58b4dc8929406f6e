import type { EndpointKind } from './tables.ts'

interface OutgoingMessage {
  id: string
  eventType: string
  createdAt: number
  payload: Record<string, unknown>
}

// Slack section text is limited to 3,000 characters, Discord content to 2,000 and embed descriptions to 4,096.
const SLACK_TEXT_LIMIT = 2_900
const DISCORD_CONTENT_LIMIT = 1_900
const DISCORD_DESCRIPTION_LIMIT = 4_000

/** The request body an endpoint of `kind` receives for a message (DESIGN: kinds). */
export function renderBody(kind: EndpointKind, message: OutgoingMessage): string {
  if (kind === 'slack') return JSON.stringify(slackBody(message))
  if (kind === 'discord') return JSON.stringify(discordBody(message))
  return JSON.stringify({ id: message.id, type: message.eventType, timestamp: new Date(message.createdAt).toISOString(), data: message.payload })
}

function slackBody(message: OutgoingMessage) {
  const alert = alertParts(message.payload)
  if (alert) {
    const lines = [`*${alert.headline}*`, ...(alert.link ? [`<${alert.link}|Open the window in the portal>`] : []), ...alert.contributors.map((line) => `• ${line}`)]
    return {
      text: truncate(alert.headline, SLACK_TEXT_LIMIT),
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text: truncate(lines.join('\n'), SLACK_TEXT_LIMIT) } },
        { type: 'context', elements: [{ type: 'mrkdwn', text: `${message.eventType} · ${message.id} · ${new Date(message.createdAt).toISOString()}` }] },
      ],
    }
  }
  const headline = `*${message.eventType}* ${summary(message.payload)}`.trim()
  return {
    text: truncate(headline, SLACK_TEXT_LIMIT),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: truncate(headline, SLACK_TEXT_LIMIT) } },
      { type: 'section', text: { type: 'mrkdwn', text: codeBlock(message.payload, SLACK_TEXT_LIMIT) } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `${message.id} · ${new Date(message.createdAt).toISOString()}` }] },
    ],
  }
}

function discordBody(message: OutgoingMessage) {
  const alert = alertParts(message.payload)
  if (alert) {
    return {
      content: truncate(alert.headline, DISCORD_CONTENT_LIMIT),
      embeds: [
        {
          title: truncate(alert.headline, 256),
          ...(alert.link ? { url: alert.link } : {}),
          description: truncate(alert.contributors.map((line) => `• ${line}`).join('\n') || 'No contributors to list.', DISCORD_DESCRIPTION_LIMIT),
          color: message.eventType === 'alert.resolved' ? 0x2eb67d : message.eventType === 'alert.error' ? 0x9e9e9e : 0xe01e5a,
          timestamp: new Date(message.createdAt).toISOString(),
          footer: { text: `${message.eventType} · ${message.id}` },
        },
      ],
    }
  }
  return {
    content: truncate(`**${message.eventType}** ${summary(message.payload)}`.trim(), DISCORD_CONTENT_LIMIT),
    embeds: [
      {
        title: message.eventType,
        description: codeBlock(message.payload, DISCORD_DESCRIPTION_LIMIT),
        timestamp: new Date(message.createdAt).toISOString(),
        footer: { text: message.id },
      },
    ],
  }
}

/** The payload's top-level text and number fields as `key: value` pairs, the line a person reads first. */
function summary(payload: Record<string, unknown>): string {
  return Object.entries(payload)
    .filter(([, value]) => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    .slice(0, 6)
    .map(([key, value]) => `${key}: ${value}`)
    .join(', ')
}

function codeBlock(payload: Record<string, unknown>, limit: number): string {
  return '```\n' + truncate(JSON.stringify(payload, null, 2), limit - 8) + '\n```'
}

function truncate(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`
}

/** An alert notification's parts a person reads (src/alerts/notification.ts): its headline, link and top contributors. */
function alertParts(payload: Record<string, unknown>): { headline: string; link: string | null; contributors: string[] } | undefined {
  if (typeof payload.headline !== 'string' || typeof payload.ruleId !== 'string') return undefined
  const contributors = Array.isArray(payload.topContributors) ? (payload.topContributors as { label?: unknown; value?: unknown; detail?: unknown }[]) : []
  return {
    headline: payload.headline,
    link: typeof payload.link === 'string' ? payload.link : null,
    contributors: contributors.map((c) => [String(c.label), c.value === undefined ? '' : `(${c.value})`, c.detail === undefined ? '' : `— ${c.detail}`].filter(Boolean).join(' ')),
  }
}
