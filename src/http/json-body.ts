import secureJson from 'secure-json-parse'
import { ProblemError } from './problem.ts'

// A `\u0000` escape not itself escaped: an even run of backslashes (maybe none) before it.
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g

/**
 * Parses a JSON request body the one way every route does. Keys `__proto__` and
 * `constructor.prototype` are refused; U+0000, which PostgreSQL's text and jsonb cannot hold,
 * becomes U+FFFD so that both databases store the same thing and no event is lost over it.
 */
export function parseJsonBody(text: string): unknown {
  const withoutNul = text.includes('\\u0000') ? text.replace(NUL_ESCAPE, '$1\\ufffd') : text
  try {
    return secureJson.parse(withoutNul, undefined, { protoAction: 'error', constructorAction: 'error' })
  } catch (error) {
    const message = (error as Error).message
    throw new ProblemError(
      400,
      'invalid_json',
      /prototype/i.test(message) ? 'body: contains a __proto__ or constructor.prototype key, which is refused' : `body: is not valid JSON (${message})`,
    )
  }
}

/** Whether a parsed JSON value nests deeper than `maxDepth` levels (iteratively: the input may be very deep). */
export function nestedDeeperThan(root: object, maxDepth: number): boolean {
  const stack: [unknown, number][] = [[root, 1]]
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!
    if (depth > maxDepth) return true
    for (const child of Object.values(value as object)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1])
    }
  }
  return false
}
