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
