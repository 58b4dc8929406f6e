import { createHash } from 'node:crypto'
import type { GroupingComponent } from './fingerprint.ts'
import type { Frame } from './stack-trace.ts'

/**
 * Grouping algorithm v1, frozen: the groups it opened keep their fingerprints, and v2 computes it
 * again for an occurrence whose v2 fingerprint is unknown, so that such an occurrence finds its old
 * group (see group-store.ts). test/errors/fingerprint-golden.test.ts pins its output: nothing here
 * may change. Its frames' `inApp` are those of `isInApp` (stack-trace.ts) or as given.
 */
export const GROUPING_ALGORITHM_V1 = 'v1'
const GROUPING_ALGORITHM = GROUPING_ALGORITHM_V1

export interface GroupingV1 {
  fingerprint: string
  algorithm: typeof GROUPING_ALGORITHM_V1
  components: GroupingComponent[]
}

export interface GroupingInputV1 {
  name: string
  message: string
  frames: Frame[]
  /** a client's fingerprint; `{{ default }}` stands for the computed one */
  override?: string[]
}

const DEFAULT_PLACEHOLDER = /^\{\{\s*default\s*\}\}$/

/** The fingerprint of an occurrence in a project: hex SHA-256 of the contributing components, with those components. */
export function computeGroupingV1(projectId: string, input: GroupingInputV1): GroupingV1 {
  const components = defaultComponents(input)
  const defaultHash = hashComponents(projectId, components)
  const override = input.override
  if (!override || override.every((part) => DEFAULT_PLACEHOLDER.test(part))) {
    return { fingerprint: defaultHash, algorithm: GROUPING_ALGORITHM, components }
  }
  const usesDefault = override.some((part) => DEFAULT_PLACEHOLDER.test(part))
  const custom: GroupingComponent = {
    id: 'custom',
    contributes: true,
    values: override.map((part) => (DEFAULT_PLACEHOLDER.test(part) ? defaultHash : part)),
    hint: usesDefault ? 'the client’s fingerprint, with {{ default }} standing for the computed one' : 'the client’s fingerprint replaces the computed one',
  }
  const shown = components.map((component) =>
    usesDefault || !component.contributes ? component : { ...component, contributes: false, hint: 'replaced by the client’s fingerprint' },
  )
  return { fingerprint: hashComponents(projectId, [custom]), algorithm: GROUPING_ALGORITHM, components: [...shown, custom] }
}

function hashComponents(projectId: string, components: GroupingComponent[]): string {
  const hashed = components.filter((component) => component.contributes).map((component) => [component.id, component.values])
  return createHash('sha256').update(JSON.stringify([GROUPING_ALGORITHM, projectId, hashed])).digest('hex')
}

function defaultComponents(input: GroupingInputV1): GroupingComponent[] {
  const exception: GroupingComponent = { id: 'exception', contributes: true, values: [input.name.trim()], hint: 'the exception name always counts' }
  const callSites = inAppCallSites(input.frames)
  const hasStack = callSites.length > 0
  const stacktrace: GroupingComponent = {
    id: 'stacktrace',
    contributes: hasStack,
    values: callSites,
    hint: hasStack
      ? 'in-app frames, innermost first: module or file name and function, without line numbers or paths'
      : input.frames.length > 0
        ? 'not used: no frame is in-app'
        : 'not used: no stack trace',
  }
  const message: GroupingComponent = hasStack
    ? {
        id: 'message',
        contributes: false,
        // Shown in the group detail, but only a new fingerprint's components are stored: read when stored,
        // so that the occurrences of known errors skip a dozen regular expressions over their message.
        get values() {
          return [parameterizeMessage(input.message)]
        },
        hint: 'not used: the stack trace identifies the error',
      }
    : { id: 'message', contributes: true, values: [parameterizeMessage(input.message)], hint: 'the message with variable parts replaced by placeholders' }
  return [exception, stacktrace, message]
}

/** `module-or-file function` of each in-app frame; repeats of one call site (recursion) count once. */
function inAppCallSites(frames: Frame[]): string[] {
  const sites: string[] = []
  for (const frame of frames) {
    if (!frame.inApp) continue
    const where = frame.module ? normalizeModule(frame.module) : frame.filename ? fileBasename(frame.filename) : ''
    const fn = normalizeFunction(frame.function)
    if (where === '' && fn === '?') continue
    const site = `${where} ${fn}`
    if (sites[sites.length - 1] !== site) sites.push(site)
  }
  return sites
}

/** Lower-cased base name without query, fragment or a content hash (`main.3f9a2b1c.js` → `main.js`). */
export function fileBasename(path: string): string {
  const withoutQuery = path.includes('?') || path.includes('#') ? path.replace(/[?#].*$/, '') : path
  const base = withoutQuery.slice(afterLastSeparator(withoutQuery)).toLowerCase()
  return mayHoldContentHash(base) ? base.replace(/[.-](?=[0-9a-f]*\d)[0-9a-f]{8,}(?=\.)/g, '') : base
}

/** Where the base name starts: after the last `/` or `\\` (a loop: V8's lastIndexOf is a runtime call that costs more than the scan). */
function afterLastSeparator(path: string): number {
  for (let index = path.length - 1; index >= 0; index--) {
    const code = path.charCodeAt(index)
    if (code === SLASH || code === BACKSLASH) return index + 1
  }
  return 0
}

/**
 * Whether a `.` follows a `.` or `-` by more than 8 characters, as it must after a content hash: most
 * base names hold none, and this loop costs less than the replacement above.
 */
function mayHoldContentHash(base: string): boolean {
  let separator = -1
  for (let index = 0; index < base.length; index++) {
    const code = base.charCodeAt(index)
    if (code === DOT && separator >= 0 && index - separator > 8) return true
    if (code === DOT || code === DASH) separator = index
  }
  return false
}

const DOT = 46
const DASH = 45
const SLASH = 47
const BACKSLASH = 92

// Numbered anonymous classes and JVM lambdas are renumbered whenever the surrounding code changes.
function normalizeModule(module: string): string {
  return module.replace(/\$\$Lambda.*$/, '$$$$Lambda').replace(/\$\d+/g, '$$')
}

function normalizeFunction(fn: string | null): string {
  if (!fn) return '?'
  let name = fn
  // Tested first: most names have none of these, and the replacements cost more than the tests.
  if (name.startsWith('async ')) name = name.slice('async '.length)
  if (name.includes(' [as ')) name = name.replace(/ \[as [^\]]*\]$/, '')
  if (name.startsWith('lambda$')) name = name.replace(/^(lambda\$.*?)\$\d+$/, '$1')
  return name === '' ? '?' : name
}

// Order matters: a URL holds numbers and may hold an e-mail address; a date-time holds a time.
const PARAMETERS: [RegExp, string][] = [
  [/(^|[\s(\[{=:,])('[^'\n]*'|"[^"\n]*"|`[^`\n]*`)(?=$|[\s)\]},.;:!?])/g, '$1<quoted>'],
  [/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>]+/gi, '<url>'],
  [/\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g, '<email>'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\w:])/g, '<datetime>'],
  [/\b\d{4}-\d{2}-\d{2}\b/g, '<date>'],
  [/\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g, '<ip>'],
  [/(?<![\w:])(?=[0-9a-f:]*::|(?:[0-9a-f]{1,4}:){7})[0-9a-f:]{3,39}(?![\w:])/gi, '<ip>'],
  [/\b\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\b/g, '<time>'],
  [/\b(?:[0-9a-f]{64}|[0-9a-f]{40}|[0-9a-f]{32})\b/gi, '<hash>'],
  [/\b0x[0-9a-f]+\b/gi, '<hex>'],
  [/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b/gi, '<hex>'],
  [/(?<![\w<])\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)\b/gi, '<duration>'],
  [/\b(?=[\w-]*\d[\w-]*\d)(?=[\w-]*[a-z])[a-z0-9][\w-]{9,}\b/gi, '<id>'],
  [/(?<![\w<])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?\b/gi, '<num>'],
]

/** The message with its variable parts (ids, addresses, times, numbers, quoted values) replaced by placeholders. */
export function parameterizeMessage(message: string): string {
  let text = message
  for (const [pattern, placeholder] of PARAMETERS) text = text.replace(pattern, placeholder)
  return text.replace(/\s+/g, ' ').trim()
}
