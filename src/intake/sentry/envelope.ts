import { parseJsonBody } from '../../http/json-body.ts'
import { ProblemError } from '../../http/problem.ts'

export interface EnvelopeItem {
  type: string
  payload: Buffer
}

export interface Envelope {
  header: Record<string, unknown>
  items: EnvelopeItem[]
}

const NEWLINE = 0x0a

/**
 * Sentry's envelope: a JSON header line, then items, each a JSON header line (`type`, and `length`
 * when the payload may hold newlines) followed by its payload. A broken header is a 400 naming the
 * item; the payloads are parsed later, by type, and only those the portal takes.
 */
export function parseEnvelope(body: Buffer): Envelope {
  let position = 0
  const line = (): Buffer | undefined => {
    if (position >= body.length) return undefined
    const end = body.indexOf(NEWLINE, position)
    const stop = end === -1 ? body.length : end
    const text = body.subarray(position, stop)
    position = stop + 1
    return text
  }
  const header = jsonLine(line(), 'envelope header')
  const items: EnvelopeItem[] = []
  for (let headerLine = line(); headerLine !== undefined; headerLine = line()) {
    if (headerLine.length === 0) continue // a trailing newline
    const itemHeader = jsonLine(headerLine, `envelope item ${items.length} header`)
    if (typeof itemHeader.type !== 'string') throw invalid(`envelope item ${items.length} header: type is required`)
    const length = itemHeader.length
    let payload: Buffer
    if (length === undefined || length === null) {
      payload = line() ?? Buffer.alloc(0)
    } else {
      if (typeof length !== 'number' || !Number.isInteger(length) || length < 0 || position + length > body.length) {
        throw invalid(`envelope item ${items.length} header: length ${JSON.stringify(length)} does not fit the body`)
      }
      payload = body.subarray(position, position + length)
      position += length
      if (body[position] === NEWLINE) position++
    }
    items.push({ type: itemHeader.type, payload })
  }
  return { header, items }
}

function jsonLine(line: Buffer | undefined, what: string): Record<string, unknown> {
  if (line === undefined) throw invalid(`${what}: missing`)
  let parsed: unknown
  try {
    parsed = parseJsonBody(line.toString('utf8'), 16)
  } catch {
    throw invalid(`${what}: is not a JSON object`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid(`${what}: is not a JSON object`)
  return parsed as Record<string, unknown>
}

function invalid(detail: string) {
  return new ProblemError(400, 'invalid_envelope', detail)
}
