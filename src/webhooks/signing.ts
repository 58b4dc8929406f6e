import { createHmac, randomBytes } from 'node:crypto'

const SECRET_PREFIX = 'whsec_'

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64, the form its libraries take. */
export function newEndpointSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64')
}

/**
 * The Standard Webhooks `webhook-signature` value: `v1,<base64 HMAC-SHA256>` of `id.timestamp.body`
 * for each secret, space-separated, so a receiver holding either secret of a rotation verifies it.
 */
export function standardWebhookSignature(secrets: string[], messageId: string, timestampSeconds: number, body: string): string {
  const signedContent = `${messageId}.${timestampSeconds}.${body}`
  return secrets
    .map((secret) => `v1,${createHmac('sha256', Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')).update(signedContent).digest('base64')}`)
    .join(' ')
}
