import type { PortalContext } from '../context.ts'
import { ProblemError } from '../http/problem.ts'
import { constantTimeEqual, hmacSha256Hex } from '../identity/secrets.ts'

/** Spec 5.3: `X-Service-Signature` is the bare lower-case hex HMAC-SHA256 of the raw body, keyed with the key's webhook secret. */
export function verifyIngestSignature(ctx: PortalContext, webhookSecretEncrypted: string, signature: unknown, body: Buffer): void {
  if (typeof signature !== 'string' || signature === '') {
    throw new ProblemError(403, 'missing_signature', 'X-Service-Signature: required, the hex HMAC-SHA256 of the body keyed with the webhook secret')
  }
  const expected = hmacSha256Hex(ctx.secretBox.open(webhookSecretEncrypted), body)
  if (!constantTimeEqual(signature.trim().toLowerCase(), expected)) {
    throw new ProblemError(403, 'invalid_signature', 'X-Service-Signature: does not match the body; sign the exact bytes sent with the webhook secret of this API key')
  }
}
