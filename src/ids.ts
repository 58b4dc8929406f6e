import { randomBytes } from 'node:crypto'

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz'

/**
 * A type-prefixed id that sorts by creation time: `prj_` + 10 characters of milliseconds + 16 random
 * characters, in lower-case Crockford base 32 (the ULID layout).
 */
export function newId(prefix: string, now = Date.now()): string {
  let tail = ''
  for (const byte of takeRandomBytes(16)) tail += CROCKFORD[byte & 31]
  return `${prefix}_${timePart(now)}${tail}`
}

/**
 * An event's id: newId's layout and order, but its 16 characters after the time are this process's random tag (8)
 * and a counter (8) rather than fresh randomness. Ids stay unique (the tag's 40 random bits tell processes apart,
 * the counter an event of the process from every other), they sort in arrival order within a millisecond, and the
 * columnar store compresses a column of them to a few bytes an event, where 80 random bits never compress.
 */
export function newEventId(now = Date.now()): string {
  let counter = ''
  for (let rest = eventCounter, i = 0; i < 8; i++, rest = Math.floor(rest / 32)) counter = CROCKFORD[rest % 32] + counter
  eventCounter = (eventCounter + 1) % 32 ** 8
  return `evt_${timePart(now)}${processTag}${counter}`
}

const processTag = Array.from(randomBytes(8), (byte) => CROCKFORD[byte & 31]).join('')
let eventCounter = 0

/** The 10 characters of `now` in milliseconds, kept for the next id of the same millisecond (a batch shares one). */
function timePart(now: number): string {
  if (now === lastTime) return lastTimePart
  let time = ''
  for (let rest = now, i = 0; i < 10; i++, rest = Math.floor(rest / 32)) time = CROCKFORD[rest % 32] + time
  lastTime = now
  lastTimePart = time
  return time
}
let lastTime = NaN
let lastTimePart = ''

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
