import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import type { SecretBox } from '../context.ts'

/** Tokens, keys and secrets are stored only as this hash. */
export function sha256Hex(value: string | Buffer): string {
  return createHash('sha256').update(value).digest('hex')
}

/** A random credential with a readable type prefix: `pat_…`, `pk_…`, `whsec_…`. */
export function newCredential(prefix: string, bytes = 32): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`
}

/** A credential of word characters only (`pk_` and hex), for formats such as Sentry's DSN that allow nothing else. */
export function newWordCredential(prefix: string, bytes = 32): string {
  return `${prefix}_${randomBytes(bytes).toString('hex')}`
}

/** The first characters of a credential, kept in clear so a person can tell keys apart in a list. */
export function displayPrefix(credential: string): string {
  return credential.slice(0, credential.indexOf('_') + 7)
}

/** Lower-case hex HMAC-SHA256 of `body` keyed with the secret's UTF-8 bytes (spec 5.3). */
export function hmacSha256Hex(secret: string, body: Buffer | string): string {
  return createHmac('sha256', secret).update(body).digest('hex')
}

/** Constant-time comparison of two strings of any length. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  // Compare equal-length digests so the time taken does not reveal the length either.
  return timingSafeEqual(createHash('sha256').update(left).digest(), createHash('sha256').update(right).digest()) && left.length === right.length
}

/** Encrypts secrets that must be usable in clear later (HMAC keys) with AES-256-GCM under the server key. */
export function createSecretBox(key: Buffer): SecretBox {
  return {
    seal(plaintext) {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
      return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`
    },
    open(sealed) {
      if (!sealed.startsWith('v1.')) throw new Error('unknown secret encoding')
      const raw = Buffer.from(sealed.slice(3), 'base64url')
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12))
      decipher.setAuthTag(raw.subarray(12, 28))
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')
    },
  }
}

/**
 * The 32-byte server key: derived from PORTAL_SECRET_KEY when set, else read from (or created in)
 * `secret.key` in the data folder with mode 0600.
 */
export function loadServerKey(secretKey: string | undefined, dataDir: string): Buffer {
  if (secretKey !== undefined) return createHash('sha256').update(secretKey).digest()
  const file = path.join(dataDir, 'secret.key')
  fs.mkdirSync(dataDir, { recursive: true })
  try {
    fs.writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64')
  if (key.length !== 32) throw new Error(`${file} must hold 32 bytes in base64`)
  return key
}
