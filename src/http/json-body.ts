import secureJson from 'secure-json-parse'
import { ProblemError } from './problem.ts'

// A `\u0000` escape not itself escaped: an even run of backslashes (maybe none) before it.
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g

/**
 * How deep a JSON body of any route but ingest may nest. JSON.stringify, Ajv and PostgreSQL's jsonb
 * all recurse, so a body nested thousands deep would otherwise end in a stack overflow (a 500) far
 * from here. Ingest parses with no limit: there depth is an event's fault, rejected per event.
 */
export const MAX_BODY_DEPTH = 64

/**
 * Parses a JSON request body the one way every route does. Keys `__proto__` and
 * `constructor.prototype` are refused, and so is nesting deeper than `maxDepth`; U+0000, which
 * PostgreSQL's text and jsonb cannot hold, becomes U+FFFD so that both databases store the same
 * thing and no event is lost over it.
 */
export function parseJsonBody(text: string, maxDepth = Infinity): unknown {
  const withoutNul = text.includes('\\u0000') ? text.replace(NUL_ESCAPE, '$1\\ufffd') : text
  let parsed: unknown
  try {
    parsed = secureJson.parse(withoutNul, undefined, { protoAction: 'error', constructorAction: 'error' })
  } catch (error) {
    const message = (error as Error).message
    throw new ProblemError(
      400,
      'invalid_json',
      /prototype/i.test(message) ? 'body: contains a __proto__ or constructor.prototype key, which is refused' : `body: is not valid JSON (${message})`,
    )
  }
  if (maxDepth !== Infinity && typeof parsed === 'object' && parsed !== null && nestedDeeperThan(parsed, maxDepth)) {
    throw new ProblemError(400, 'too_deep', `body: is nested deeper than ${maxDepth} levels`)
  }
  return parsed
}

/**
 * Path and query parameters follow the same rule as JSON bodies: U+0000 becomes U+FFFD, so that a
 * lookup or filter carrying one finds what a body carrying one stored, on both databases (and
 * PostgreSQL is never handed a NUL it refuses with an error).
 */
export function replaceNulInParameters(parameters: unknown): void {
  if (typeof parameters !== 'object' || parameters === null) return
  const record = parameters as Record<string, unknown>
  for (const [name, value] of Object.entries(record)) {
    if (typeof value === 'string' && value.includes('\u0000')) record[name] = value.replaceAll('\u0000', '\ufffd')
    else if (Array.isArray(value)) record[name] = value.map((item) => (typeof item === 'string' ? item.replaceAll('\u0000', '\ufffd') : item))
  }
}

/**
 * Whether a parsed JSON value nests deeper than `maxDepth` levels. Recursive, so the stack it takes is bounded by
 * `maxDepth` (at most 64 here), not by the input; it allocates nothing, as it runs on every ingested event.
 */
export function nestedDeeperThan(root: object, maxDepth: number): boolean {
  if (maxDepth > MAX_CHECKED_DEPTH) throw new RangeError(`nestedDeeperThan checks at most ${MAX_CHECKED_DEPTH} levels`)
  return hasObjectDeeperThan(root, maxDepth - 1)
}

const MAX_CHECKED_DEPTH = 1_000

function hasObjectDeeperThan(value: object, levelsLeft: number): boolean {
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) if (isDeeper(value[index], levelsLeft)) return true
    return false
  }
  for (const key in value) if (isDeeper((value as Record<string, unknown>)[key], levelsLeft)) return true
  return false
}

function isDeeper(child: unknown, levelsLeft: number): boolean {
  return typeof child === 'object' && child !== null && (levelsLeft === 0 || hasObjectDeeperThan(child, levelsLeft - 1))
}
