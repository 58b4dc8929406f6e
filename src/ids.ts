import { randomBytes } from 'node:crypto'

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz'

/**
 * A type-prefixed id that sorts by creation time: `prj_` + 10 characters of milliseconds + 16 random
 * characters, in lower-case Crockford base 32 (the ULID layout).
 */
export function newId(prefix: string, now = Date.now()): string {
  let time = ''
  for (let rest = now, i = 0; i < 10; i++, rest = Math.floor(rest / 32)) time = CROCKFORD[rest % 32] + time
  let tail = ''
  for (const byte of takeRandomBytes(16)) tail += CROCKFORD[byte & 31]
  return `${prefix}_${time}${tail}`
}

// One call into OpenSSL per id was a tenth of ingest's time; drawing ids from a larger buffer is not.
const RANDOM_POOL_SIZE = 16 * 1024
let randomPool = randomBytes(RANDOM_POOL_SIZE)
let randomOffset = 0

function takeRandomBytes(count: number): Buffer {
  if (randomOffset + count > RANDOM_POOL_SIZE) {
    randomPool = randomBytes(RANDOM_POOL_SIZE)
    randomOffset = 0
  }
  randomOffset += count
  return randomPool.subarray(randomOffset - count, randomOffset)
}

/** An opaque pagination cursor that carries the sort key of the last row of a page. */
export function encodeCursor(position: (string | number)[]): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url')
}

/** The position inside a cursor, or undefined when the text is not a cursor this portal wrote. */
export function decodeCursor(cursor: string, shape: ('string' | 'number')[]): (string | number)[] | undefined {
  try {
    const position = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    if (!Array.isArray(position) || position.length !== shape.length) return undefined
    return position.every((value, i) => typeof value === shape[i]) ? position : undefined
  } catch {
    return undefined
  }
}

export function isoTime(epochMs: number | null): string | null {
  return epochMs === null ? null : new Date(epochMs).toISOString()
}
