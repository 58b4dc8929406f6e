import { randomBytes } from 'node:crypto'

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz'

/**
 * A type-prefixed id that sorts by creation time: `prj_` + 10 characters of milliseconds + 16 random
 * characters, in lower-case Crockford base 32 (the ULID layout).
 */
export function newId(prefix: string, now = Date.now()): string {
  let time = ''
  for (let rest = now, i = 0; i < 10; i++, rest = Math.floor(rest / 32)) time = CROCKFORD[rest % 32] + time
  const random = randomBytes(16)
  let tail = ''
  for (const byte of random) tail += CROCKFORD[byte & 31]
  return `${prefix}_${time}${tail}`
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
