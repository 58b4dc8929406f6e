import crypto from 'node:crypto'
import { computeGroupingV1, fileBasename, parameterizeMessage, type GroupingInputV1 } from './fingerprint-v1.ts'
import type { Frame } from './stack-trace.ts'

/**
 * Grouping algorithms v2 and v3, Sentry's (`newstyle:2023-01-11`) in their choices: every exception of
 * a chain counts, an exception group by its main exceptions; in-app frames first, then all frames, the
 * message last. v3, the current one, is v2 with the rules marked `v3` below, each where v2 grouped
 * apart what Sentry groups together or the reverse (docs/errors.md); v2 is computed only for groups it
 * opened. Every rule here decides which occurrences share a group, and test/errors/fingerprint-golden-v2
 * and -v3 pin them: a change that moves a fingerprint is a new version (v1 is kept in fingerprint-v1.ts).
 */
export const GROUPING_ALGORITHM = 'v3'

type Version = 'v2' | 'v3'

/** One named input of a fingerprint, shown in the group detail so a user sees why occurrences share a group. */
export interface GroupingComponent {
  /** exception (its type), stacktrace, value (an exception's message), message (an event without exception) or custom */
  id: string
  /** whether its values went into the hash */
  contributes: boolean
  values: string[]
  /** why it counts or does not */
  hint: string
}

export interface Grouping {
  fingerprint: string
  algorithm: string
  components: GroupingComponent[]
  /**
   * The fingerprints the earlier algorithms give the same occurrence, newest first, computed when asked
   * (for a fingerprint not seen before): a group opened under one of them takes the occurrence (see group-store.ts).
   */
  earlier?: () => { fingerprint: string; algorithm: string }[]
}

/** What Sentry's `mechanism` says of an exception's place in an exception group. */
export interface ExceptionMechanism {
  exceptionId?: number
  parentId?: number
  isExceptionGroup?: boolean
  /** the type was made up by the SDK (a signal, a non-Error thrown), not raised by the code */
  synthetic?: boolean
}

/** One exception of a chain, its frames innermost first. */
export interface ExceptionInput {
  type: string
  value: string
  frames: Frame[]
  mechanism?: ExceptionMechanism
}

export interface GroupingInput extends GroupingInputV1 {
  /** every exception, oldest first as Sentry lists them (the thrown one last); without it, the one of name, message and frames */
  chain?: ExceptionInput[]
  /** the thrown exception's mechanism, when there is no chain */
  mechanism?: ExceptionMechanism
  /** an event without exception type (Sentry's captureMessage, an `error` event with a message only) */
  isMessage?: boolean
  /** a message event's text before its parameters were put in (Sentry's `logentry.message`, else its message): it groups the event, its stack does not */
  messageTemplate?: string
  /** Sentry's platform (javascript, node, python, java, go, …); guessed from each frame's file otherwise */
  platform?: string
  /** for the fingerprint variables `{{ level }}`, `{{ transaction }}` and `{{ tags.NAME }}` */
  level?: string
  transaction?: string
  tags?: Record<string, unknown>
}

/** The fingerprint of an occurrence in a project by the current algorithm: hex SHA-256 of the contributing components, with those components. */
export function computeGrouping(projectId: string, input: GroupingInput): Grouping {
  return groupingOf('v3', projectId, input, () => {
    const v2 = groupingOf('v2', projectId, input)
    const v1 = computeGroupingV1(projectId, input)
    return [
      { fingerprint: v2.fingerprint, algorithm: v2.algorithm },
      { fingerprint: v1.fingerprint, algorithm: v1.algorithm },
    ]
  })
}

/** The fingerprint grouping v2 gives an occurrence: what groups v2 opened are known by. */
export function computeGroupingV2(projectId: string, input: GroupingInput): Grouping {
  return groupingOf('v2', projectId, input)
}

function groupingOf(version: Version, projectId: string, input: GroupingInput, earlier?: Grouping['earlier']): Grouping {
  const components = defaultComponents(input, version)
  const defaultHash = hashComponents(version, projectId, components)
  const override = input.override
  if (!override || override.every(isDefaultVariable)) return { fingerprint: defaultHash, algorithm: version, components, earlier }
  const usesDefault = override.some(isDefaultVariable)
  const custom: GroupingComponent = {
    id: 'custom',
    contributes: true,
    values: override.map((part) => fingerprintPart(part, input, defaultHash)),
    hint: usesDefault
      ? 'the client’s fingerprint, {{ default }} standing for the computed one and other {{ … }} for the event’s values'
      : 'the client’s fingerprint replaces the computed one; {{ … }} stand for the event’s values',
  }
  const shown = components.map((component) =>
    usesDefault || !component.contributes ? component : { ...component, contributes: false, hint: 'replaced by the client’s fingerprint' },
  )
  return { fingerprint: hashComponents(version, projectId, [custom]), algorithm: version, components: [...shown, custom], earlier }
}

function hashComponents(version: Version, projectId: string, components: GroupingComponent[]): string {
  const hashed = components.filter((component) => component.contributes).map((component) => [component.id, component.values])
  return sha256Hex(JSON.stringify([version, projectId, hashed]))
}

// The one-shot hash (Node.js 20.12 and later) costs a third of a Hash object for these short texts; same digest.
const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function' ? (text) => crypto.hash('sha256', text, 'hex') : (text) => crypto.createHash('sha256').update(text).digest('hex')

const VARIABLE = /^\{\{\s*([\w.-]+)\s*\}\}$/

function isDefaultVariable(part: string): boolean {
  return VARIABLE.exec(part)?.[1] === 'default'
}

/**
 * A part of a client's fingerprint with its variable resolved as Sentry documents them; a value the
 * event lacks is `<no-…>`, as in Sentry, and an unknown variable stays as written.
 */
function fingerprintPart(part: string, input: GroupingInput, defaultHash: string): string {
  const variable = VARIABLE.exec(part)?.[1]
  if (variable === undefined) return part
  const thrown = thrownException(input)
  switch (variable) {
    case 'default':
      return defaultHash
    case 'type':
    case 'error.type':
      return thrown?.type || '<no-type>'
    case 'error.value':
      return thrown?.value || '<no-value>'
    case 'message':
      return (input.isMessage ? input.message : thrown?.value) || '<no-message>'
    case 'function':
    case 'stack.function':
      return (thrown && crashFrame(thrown.frames)?.function) || '<no-function>'
    case 'module':
    case 'stack.module':
      return (thrown && crashFrame(thrown.frames)?.module) || '<no-module>'
    case 'transaction':
      return input.transaction || '<no-transaction>'
    case 'level':
      return input.level || '<no-level>'
  }
  if (variable.startsWith('tags.')) {
    const name = variable.slice('tags.'.length)
    const value = input.tags?.[name]
    return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : `<no-value-for-tag-${name}>`
  }
  return part
}

/** The innermost in-app frame, else the innermost frame: where it crashed. */
function crashFrame(frames: Frame[]): Frame | undefined {
  return frames.find((frame) => frame.inApp) ?? frames[0]
}

function thrownException(input: GroupingInput): ExceptionInput | undefined {
  if (input.chain && input.chain.length > 0) return input.chain[input.chain.length - 1]
  if (input.isMessage && input.frames.length === 0) return undefined
  return { type: input.name, value: input.message, frames: input.frames, mechanism: input.mechanism }
}

function defaultComponents(input: GroupingInput, version: Version): GroupingComponent[] {
  if (input.isMessage && input.messageTemplate !== undefined) return [messageComponent(input), messageStack(input, version)]
  const exceptions = input.chain && input.chain.length > 0 ? input.chain : input.isMessage && input.frames.length === 0 ? [] : [thrownException(input)!]
  if (exceptions.length === 0) return [messageComponent(input)]
  if (version === 'v3' && isChunkLoadError(exceptions[exceptions.length - 1], input.platform)) return chunkLoadComponents(exceptions[exceptions.length - 1], input.platform)
  const main = mainExceptions(exceptions, input.platform, version)
  const app = main.map((exception) => exceptionParts(exception, 'app', input.platform, version))
  // Sentry's two variants: the in-app frames when any exception has one, else every frame.
  const parts = app.some((exception) => exception.stacktrace.contributes) ? app : main.map((exception) => exceptionParts(exception, 'system', input.platform, version))
  // v3: an event without exception type whose frames say nothing (all of an SDK, a runtime, a URL) groups
  // by its message, with those that have no frames: Sentry's fallback group for events with nothing to tell.
  if (version === 'v3' && input.isMessage && parts.length === 1 && !parts[0].stacktrace.contributes) return [messageComponent(input), parts[0].stacktrace]
  return parts.flatMap((exception, index) => {
    if (parts.length === 1) return [exception.type, exception.stacktrace, exception.value]
    const place = ` (exception ${index + 1} of ${parts.length} in the chain)`
    return [exception.type, exception.stacktrace, exception.value].map((component) => ({ ...component, hint: component.hint + place }))
  })
}

/** v3: a JavaScript chunk that failed to load (webpack's `ChunkLoadError`), whichever chunk and from wherever, is one failure: a deploy or the network, as Sentry's built-in rule says. */
function isChunkLoadError(thrown: ExceptionInput, platform: string | undefined): boolean {
  if (thrown.type !== 'ChunkLoadError') return false
  return platform !== undefined ? familyOf(platform) === 'javascript' : thrown.frames.length > 0 && factsOf(thrown.frames[0], 'v3').guessedFamily === 'javascript'
}

function chunkLoadComponents(thrown: ExceptionInput, platform: string | undefined): GroupingComponent[] {
  return [
    { id: 'exception', contributes: true, values: [thrown.type], hint: 'a chunk of the app that failed to load: one group whatever the chunk, stack or message, as Sentry’s built-in rule' },
    {
      id: 'stacktrace',
      contributes: false,
      get values() {
        return frameSites(thrown.frames, 'system', platform, 'v3')
      },
      hint: 'not used: a chunk that failed to load groups by its type alone',
    },
    { id: 'value', contributes: false, values: [messageForGrouping(thrown.value)], hint: 'not used: a chunk that failed to load groups by its type alone' },
  ]
}

function messageComponent(input: GroupingInput): GroupingComponent {
  const template = input.messageTemplate ?? input.message
  if (template.trim() === '') return { id: 'message', contributes: true, values: ['<unlabeled event>'], hint: 'an event without exception or message: all such events share one group' }
  return {
    id: 'message',
    contributes: true,
    values: [messageForGrouping(template)],
    hint: template !== input.message ? 'the message template, its parameters left out' : 'the message, its variable parts replaced by placeholders',
  }
}

/** A message's stack (attachStacktrace), shown: the template groups it wherever it is sent from. */
function messageStack(input: GroupingInput, version: Version): GroupingComponent {
  return {
    id: 'stacktrace',
    contributes: false,
    get values() {
      return frameSites(input.frames, 'app', input.platform, version)
    },
    hint: input.frames.length > 0 ? 'not used: a message groups by its template, wherever it is sent from' : 'not used: no stack trace',
  }
}

/** The first two lines of a message, its variable parts replaced by placeholders (as Sentry trims them). */
function messageForGrouping(message: string): string {
  const lines = message.split('\n', 3)
  return parameterizeMessage(lines.length > 2 ? lines.slice(0, 2).join('\n') : message)
}

interface ExceptionParts {
  type: GroupingComponent
  stacktrace: GroupingComponent
  value: GroupingComponent
}

/** An exception's type, frames and value as one variant (in-app frames only, or all frames) counts them. */
function exceptionParts(exception: ExceptionInput, variant: 'app' | 'system', platform: string | undefined, version: Version): ExceptionParts {
  const synthetic = exception.mechanism?.synthetic === true
  const typeName = exception.type.trim()
  const type: GroupingComponent = {
    id: 'exception',
    contributes: typeName !== '' && !synthetic,
    values: typeName === '' ? [] : [typeName],
    hint: synthetic ? 'not used: the SDK made up this type' : typeName === '' ? 'not used: no exception type' : 'the exception type',
  }
  const sites = frameSites(exception.frames, variant, platform, version)
  const stacktrace: GroupingComponent = {
    id: 'stacktrace',
    contributes: sites.length > 0,
    values: sites,
    hint:
      sites.length > 0
        ? variant === 'app'
          ? 'in-app frames, innermost first: module or file base name and function, without line numbers or paths'
          : 'no frame is in-app: all frames, innermost first, module or file base name and function'
        : exception.frames.length > 0
          ? 'not used: no frame says which code it is'
          : 'not used: no stack trace',
  }
  const value: GroupingComponent = stacktrace.contributes
    ? {
        id: 'value',
        contributes: false,
        // Read when shown or stored: the occurrences of known errors skip a dozen regular expressions over their message.
        get values() {
          return [messageForGrouping(exception.value)]
        },
        hint: 'not used: the stack trace identifies the error',
      }
    : exception.value.trim() === ''
      ? { id: 'value', contributes: false, values: [], hint: 'not used: no message' }
      : { id: 'value', contributes: true, values: [messageForGrouping(exception.value)], hint: 'the message (first two lines), its variable parts replaced by placeholders' }
  return { type, stacktrace, value }
}

/**
 * The exceptions of a chain that group it. An exception group (`mechanism.is_exception_group`, the
 * tree of `exception_id` and `parent_id`, its root id 0) counts by its top-level exceptions, the
 * first that are not groups themselves: when they are all alike, by that one and the path of its first
 * children (so it groups with the same exception thrown alone); else one of each kind, and the root.
 * A chain without ids, or a tree without a root, counts whole; a root without a usable child alone, as
 * Sentry does. v3, as Sentry does: a broken tree (an exception its own parent, an id twice) counts whole,
 * where v2 kept the root alone and so put every such group of one SDK in one group.
 */
function mainExceptions(exceptions: ExceptionInput[], platform: string | undefined, version: Version): ExceptionInput[] {
  if (exceptions.length <= 1) return exceptions
  const nodes = new Map<number, { exception?: ExceptionInput; children: ExceptionInput[] }>()
  const node = (id: number) => nodes.get(id) ?? nodes.set(id, { children: [] }).get(id)!
  for (let index = exceptions.length - 1; index >= 0; index--) {
    const exception = exceptions[index]
    const id = exception.mechanism?.exceptionId
    if (id === undefined) return exceptions
    const parentId = exception.mechanism?.parentId
    if (version === 'v3' && (parentId === id || nodes.get(id)?.exception !== undefined)) return exceptions
    node(id).exception = exception
    if (parentId !== undefined) node(parentId).children.push(exception)
  }
  const root = nodes.get(0)?.exception
  if (!root) return exceptions
  const childrenOf = (exception: ExceptionInput) => nodes.get(exception.mechanism!.exceptionId!)?.children ?? []
  const topLevel: ExceptionInput[] = []
  // A tree with a cycle or a self-parent visits each exception once.
  const visited = new Set<ExceptionInput>()
  const collect = (exception: ExceptionInput) => {
    if (visited.has(exception)) return
    visited.add(exception)
    if (!exception.mechanism?.isExceptionGroup) return void topLevel.push(exception)
    for (const child of childrenOf(exception)) collect(child)
  }
  collect(root)
  // No exception below the root (its children are groups alone, or hang in a cycle of their own): the root alone.
  if (topLevel.length === 0) return [root]
  topLevel.sort((a, b) => (a.type < b.type ? 1 : a.type > b.type ? -1 : 0))
  const distinct: ExceptionInput[] = []
  let previousKey: string | undefined
  for (const exception of topLevel) {
    const key = exceptionKey(exception, platform, version)
    if (key !== previousKey) distinct.push(exception)
    previousKey = key
  }
  if (distinct.length > 1) return [...distinct, root]
  const path: ExceptionInput[] = []
  const seen = new Set<ExceptionInput>()
  for (let exception: ExceptionInput | undefined = distinct[0]; exception && !seen.has(exception); exception = childrenOf(exception)[0]) {
    seen.add(exception)
    if (!exception.mechanism?.isExceptionGroup) path.push(exception)
  }
  return path
}

/** What makes two top-level exceptions of a group alike: their contributing values in both variants. */
function exceptionKey(exception: ExceptionInput, platform: string | undefined, version: Version): string {
  const values = (['app', 'system'] as const).flatMap((variant) => {
    const parts = exceptionParts(exception, variant, platform, version)
    return [parts.type, parts.stacktrace, parts.value].filter((component) => component.contributes).map((component) => component.values)
  })
  return JSON.stringify(values)
}

/**
 * The frames that count, innermost first, each as `module-or-file function`: in the app variant only
 * in-app frames. A frame repeating the one before it exactly (recursion) counts once; a frame with
 * nothing to say (no module, no usable file, no function) does not count; v3: nor does a frame of the
 * monitoring SDK itself, a polyfill or a runtime's scheduler (`neverCounts`).
 */
function frameSites(frames: Frame[], variant: 'app' | 'system', platform: string | undefined, version: Version): string[] {
  const sites: string[] = []
  // A printed stack is of one runtime: its innermost frame says which.
  const family = platform !== undefined ? familyOf(platform) : frames.length > 0 ? factsOf(frames[0], version).guessedFamily : 'other'
  let previous: Frame | undefined
  for (const frame of frames) {
    const repeats = previous !== undefined && sameFrame(frame, previous)
    previous = frame
    if (repeats || (variant === 'app' && !frame.inApp)) continue
    const facts = factsOf(frame, version)
    if (facts.neverCounts || (variant === 'app' && facts.vendored)) continue
    const site = siteOf(facts, frame, family, version)
    if (site !== null) sites.push(site)
  }
  // A lone JavaScript frame from a URL without a function says nothing of the error (Sentry ignores it too).
  if (sites.length === 1 && frames.length === 1 && !frames[0].function && hasUrlOrigin(frames[0].absPath ?? frames[0].filename)) return []
  return sites
}

function sameFrame(a: Frame, b: Frame): boolean {
  return a.function === b.function && a.module === b.module && a.filename === b.filename && a.lineno === b.lineno && a.colno === b.colno && a.absPath === b.absPath
}

/**
 * What grouping derives from a frame's strings (function, module, file, path), worked out once: the
 * same few hundred frames recur in every stack, and their base names, normalised names and vendored
 * verdicts cost more than a lookup. Line and column, which never change these, are not part of it.
 */
interface FrameFacts {
  /** a vendored runtime, polyfill or package cache, by path or module: never in-app, whatever the frame's own `inApp` */
  vendored: boolean
  /** v3: a frame that says nothing of the error wherever it is (see neverCounts) */
  neverCounts: boolean
  /** the runtime this frame's file says, for a stack without platform */
  guessedFamily: Family
  /** `module-or-file function` under each family, or null when nothing counts; undefined until asked */
  javascript: string | null | undefined
  java: string | null | undefined
  other: string | null | undefined
}

// One map a version, keyed by each of the frame's strings in turn (a map a level, so no two frames can share
// a key, whatever characters they hold). Bounded: cleared whole when full, as a long-running portal meets
// new releases' paths; a miss only costs the work done without it.
type ByString<T> = Map<string | null, T>
const frameFacts: Record<Version, ByString<ByString<ByString<ByString<FrameFacts>>>>> = { v2: new Map(), v3: new Map() }
const frameFactsCount: Record<Version, number> = { v2: 0, v3: 0 }
const MAX_FRAME_FACTS = 20_000

function factsOf(frame: Frame, version: Version): FrameFacts {
  const cache = frameFacts[version]
  const known = cache
    .get(frame.filename ?? null)
    ?.get(frame.absPath ?? null)
    ?.get(frame.module ?? null)
    ?.get(frame.function ?? null)
  if (known !== undefined) return known
  if (frameFactsCount[version] >= MAX_FRAME_FACTS) {
    cache.clear()
    frameFactsCount[version] = 0
  }
  const path = frame.absPath ?? frame.filename
  const facts: FrameFacts = {
    vendored: (!!path && isVendored(path)) || (!!frame.module && isVendored(frame.module)),
    neverCounts: version === 'v3' && neverCounts(frame, path),
    guessedFamily: familyOf(guessPlatform(frame)),
    javascript: undefined,
    java: undefined,
    other: undefined,
  }
  const byAbsPath = levelOf(cache, frame.filename ?? null)
  const byModule = levelOf(byAbsPath, frame.absPath ?? null)
  levelOf(byModule, frame.module ?? null).set(frame.function ?? null, facts)
  frameFactsCount[version]++
  return facts
}

function levelOf<T>(map: ByString<ByString<T>>, key: string | null): ByString<T> {
  let level = map.get(key)
  if (level === undefined) map.set(key, (level = new Map()))
  return level
}

function siteOf(facts: FrameFacts, frame: Frame, family: Family, version: Version): string | null {
  const known = facts[family]
  if (known !== undefined) return known
  return (facts[family] = frameSite(frame, family, version) ?? null)
}

// v3: frames Sentry's built-in rules leave out of grouping (`-group`), as they say nothing of which error it
// is: the monitoring SDK's own (Java `io.sentry.`, Dart `package:sentry…`), transpiler helpers and polyfills,
// the Dart runtime, Node's task queue, other APM agents wrapping calls.
const POLYFILL = /(?:^|[/\\])(?:@babel[/\\]|core-js[/\\.]|tslib[/\\.]|regenerator-runtime[/\\.])/
const SENTRY_DART = /^package:sentry(?:_\w+)?\//
const TELEMETRY = /[/\\][^/\\]*(?:newrelic|logrocket)[^/\\]*[/\\]/i
const NODE_SCHEDULER = new Set(['runMicrotasks', 'queueMicrotask', 'processTicksAndRejections', 'runNextTicks', 'nextTick'])

function neverCounts(frame: Frame, path: string | null | undefined): boolean {
  const module = frame.module
  if (module && (module.startsWith('io.sentry.') || POLYFILL.test(module) || module === 'newrelic')) return true
  if (path && (path.startsWith('org-dartlang-sdk:') || SENTRY_DART.test(path) || POLYFILL.test(path) || TELEMETRY.test(path))) return true
  // Node's scheduler by its own name, `process.` or not, where Node itself runs it (no file, or one of Node's).
  if (!frame.function || (path && !path.startsWith('node:') && !path.startsWith('internal/'))) return false
  const dot = frame.function.lastIndexOf('.')
  return NODE_SCHEDULER.has(dot >= 0 ? frame.function.slice(dot + 1) : frame.function)
}

// Vendored runtimes, polyfills and package caches: an SDK may call them in-app, being outside node_modules in a
// bundle. Literal alternatives only, which V8 searches for fast (most paths hold none).
const VENDORED = /@babel\/runtime|core-js|tslib|regenerator-runtime|\/node_modules\/|site-packages|dist-packages|\/vendor\/|\/gems\/|\.pub-cache|\/go\/pkg\/mod\/|\/usr\/local\/go\/src\/|webpack\/bootstrap|webpack\/runtime/

function isVendored(path: string): boolean {
  return VENDORED.test(path.includes('\\') ? path.replace(/\\/g, '/') : path)
}

type Family = 'javascript' | 'java' | 'other'

function familyOf(platform: string): Family {
  if (platform === 'javascript' || platform === 'node') return 'javascript'
  if (platform === 'java' || platform === 'kotlin' || platform === 'scala' || platform === 'groovy') return 'java'
  return 'other'
}

/** The platform of a frame without one: the portal's own captures carry printed stacks. */
function guessPlatform(frame: Frame): string {
  const file = frame.filename ?? ''
  if (/\.(?:[mc]?js|jsx|[mc]?ts|tsx)(?:$|[?#])/.test(file) || file.startsWith('node:') || hasUrlOrigin(file)) return 'javascript'
  if (frame.module !== null && file.endsWith('.java')) return 'java'
  return 'other'
}

/** Whether a path is an http(s), blob or file URL, as Sentry's `has_url_origin` (tested by its first letter first: most paths are not). */
function hasUrlOrigin(path: string | null | undefined): boolean {
  if (!path) return false
  const first = path.charCodeAt(0)
  if (first !== 104 && first !== 98 && first !== 102) return false
  return path.startsWith('http:') || path.startsWith('https:') || path.startsWith('blob:') || path.startsWith('file:')
}

const ANONYMOUS_FUNCTIONS = new Set(['?', '<anonymous>', '<anonymous function>', 'Anonymous function'])

/** `?`, `<anonymous>`, `Anonymous function` (Edge), `outer/<` (Firefox): looked up only for names starting as they do. */
function isAnonymous(name: string): boolean {
  const first = name.charCodeAt(0)
  if ((first === 63 || first === 60 || first === 65) && ANONYMOUS_FUNCTIONS.has(name)) return true
  return name.endsWith('/<')
}
const LOW_QUALITY_JS_FILES = new Set(['[native code]', 'native code', 'eval code', '<anonymous>'])

/** Native and eval code, and V8's `<anonymous>`: looked up only for files starting as they do. */
function isLowQualityFile(file: string | null | undefined): boolean {
  if (!file) return false
  const first = file.charCodeAt(0)
  return (first === 91 || first === 110 || first === 101 || first === 60) && LOW_QUALITY_JS_FILES.has(file)
}

/** `module-or-file function` of a frame, or undefined when none of them counts. */
function frameSite(frame: Frame, family: Family, version: Version): string | undefined {
  const fn = functionName(frame.function, family, version)
  if (family === 'javascript' && (fn === 'eval' || isLowQualityFile(frame.absPath ?? frame.filename))) return undefined
  const module = moduleName(frame, family, version)
  const where = module ?? fileName(frame, version)
  if (where === undefined && fn === undefined) return undefined
  return `${where ?? ''} ${fn ?? '?'}`
}

function moduleName(frame: Frame, family: Family, version: Version): string | undefined {
  const raw = frame.module
  if (!raw) return undefined
  // A JavaScript module that is the end of the file's path repeats the file, which says it then.
  const path = frame.absPath ?? frame.filename
  if (family === 'javascript' && raw.includes('/') && path && path.endsWith(raw)) return undefined
  if (family === 'java' && raw.includes('$$Lambda')) return undefined
  // v3: the proxies Guice and Hibernate generate, and Clojure's numbered functions, are renamed at every start.
  const module = version === 'v3' ? raw.replace(/\$\$(EnhancerByGuice|FastClassByGuice)\$\$[0-9a-f]+/g, '$$$$$1$$$$').replace(/\$HibernateProxy\$\w+/g, '$$HibernateProxy$$').replace(/fn__\d+/g, 'fn__') : raw
  // Numbered anonymous classes and generated accessors are renumbered whenever the code changes.
  return module.replace(/\$\$(?:Enhancer|FastClass)?\w*?CGLIB\$\$[0-9a-f]+(?:_\d+)?/gi, '$$$$CGLIB').replace(/(\$\$_javassist)(?:_seam)?(?:_\d+)?/g, '$1').replace(/(Generated(?:Serialization)?(?:Constructor|Method)Accessor)\d+/g, '$1').replace(/\$\d+/g, '$$')
}

/** The lower-cased base name; none for a file on a URL (its path changes with every deploy), eval code or native code. */
function fileName(frame: Frame, version: Version): string | undefined {
  const file = frame.filename
  if (!file || hasUrlOrigin(frame.absPath ?? file)) return undefined
  const base = fileBasename(file)
  if (base === '<anonymous>' || base === '[native code]' || base === '') return undefined
  // v3: a Javassist proxy's source file is numbered like its class.
  return version === 'v3' && base.includes('_$$_javassist') ? base.replace(/(_\$\$_javassist)(?:_seam)?(?:_\d+)?/g, '$1') : base
}

/**
 * A function name without what changes across runtimes and builds: `async ` and `[as alias]`, the
 * object of a JavaScript method (`Object.aha` and `Foo.aha` → `aha`, as browsers differ in it), JVM
 * lambda numbers; anonymous functions count as none. v3: an ERB template's method loses the numbers
 * Rails appends to it in every process.
 */
function functionName(raw: string | null, family: Family, version: Version): string | undefined {
  if (!raw) return undefined
  let name = raw
  if (name.startsWith('async ')) name = name.slice('async '.length)
  if (name.startsWith('new ')) name = name.slice('new '.length)
  if (name.includes(' [as ')) name = name.replace(/ \[as [^\]]*\]$/, '')
  if (family === 'javascript') {
    const dot = name.lastIndexOf('.')
    if (dot >= 0) name = name.slice(dot + 1)
    if (isAnonymous(name)) return undefined
  }
  if (family === 'java' && name.startsWith('lambda$')) return undefined
  if (version === 'v3' && name.includes('_erb__')) name = name.replace(/(_erb)__\d+_\d+$/, '$1')
  return name === '' ? undefined : name
}
