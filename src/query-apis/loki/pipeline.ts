import { parseBytes, parseDurationMs } from '../durations.ts'
import { LogqlError, type CompareOp, type LabelTest, type Matcher, type Stage } from './logql.ts'

import type { Labels } from '../samples.ts'

export type { Labels }

/** A stored log as LogQL sees it: its line (the message), its stream's labels, and its `fields` as structured metadata. */
export interface LogEntry {
  id: string
  ts: number
  line: string
  stream: Labels
  metadata: Record<string, unknown> | undefined
}

/** What a pipeline leaves of an entry: the line (line_format may rewrite it) and the labels it now carries. */
export interface PipelineResult {
  line: string
  labels: Labels
}

const ERROR_LABEL = '__error__'
const ERROR_DETAILS_LABEL = '__error_details__'
const EXTRACTED_SUFFIX = '_extracted'

/** Go's regexp matches a label anchored at both ends, as Loki's matchers do. */
export function matcherTest(matcher: Matcher): (value: string) => boolean {
  const { op, value } = matcher
  if (op === '=') return (actual) => actual === value
  if (op === '!=') return (actual) => actual !== value
  const regex = compileRegex(value, true, matcher.name)
  return op === '=~' ? (actual) => regex.test(actual) : (actual) => !regex.test(actual)
}

/** A Go (RE2) regular expression as JavaScript's; a leading `(?i)` becomes the `i` flag. */
function compileRegex(pattern: string, anchored: boolean, where: string): RegExp {
  const caseless = pattern.startsWith('(?i)')
  const body = caseless ? pattern.slice(4) : pattern
  try {
    return new RegExp(anchored ? `^(?:${body})$` : body, caseless ? 'i' : '')
  } catch (error) {
    throw new LogqlError(`parse error: invalid regular expression in ${where}: ${(error as Error).message}`)
  }
}

/** The selector's matchers as one test of a stream's labels (an absent label matches as ""). */
export function streamTest(matchers: Matcher[]): (labels: Labels) => boolean {
  const tests = matchers.map((matcher) => ({ name: matcher.name, test: matcherTest(matcher) }))
  return (labels) => tests.every(({ name, test }) => test(labels[name] ?? ''))
}

/** The pipeline stages as one function of an entry, in order; undefined when a stage drops it. */
export function compilePipeline(stages: Stage[]): (entry: LogEntry) => PipelineResult | undefined {
  const steps = stages.map(compileStage)
  return (entry) => {
    const state = { line: entry.line, labels: { ...entry.stream }, entry }
    for (const step of steps) if (!step(state)) return undefined
    return { line: state.line, labels: state.labels }
  }
}

interface PipelineState {
  line: string
  labels: Labels
  entry: LogEntry
}

function compileStage(stage: Stage): (state: PipelineState) => boolean {
  switch (stage.kind) {
    case 'line':
      return lineFilter(stage.op, stage.value)
    case 'json':
      return (state) => {
        parseJsonLabels(state)
        return true
      }
    case 'logfmt':
      return (state) => {
        parseLogfmtLabels(state)
        return true
      }
    case 'labels': {
      const test = labelTest(stage.test)
      return (state) => test(state)
    }
    case 'lineFormat': {
      const render = lineTemplate(stage.template)
      return (state) => {
        state.line = render(state)
        return true
      }
    }
  }
}

function lineFilter(op: string, value: string): (state: PipelineState) => boolean {
  if (op === '|=') return (state) => state.line.includes(value)
  if (op === '!=') return (state) => !state.line.includes(value)
  // A line filter's regular expression is unanchored, as in Loki.
  const regex = compileRegex(value, false, 'line filter')
  return op === '|~' ? (state) => regex.test(state.line) : (state) => !regex.test(state.line)
}

/** A label's value for a filter: a stream or parsed label, else the entry's structured metadata (its `fields`). */
function labelValue(state: PipelineState, name: string): string | undefined {
  if (Object.hasOwn(state.labels, name)) return state.labels[name]
  const value = state.entry.metadata?.[name]
  if (value === undefined || value === null) return undefined
  return typeof value === 'object' ? JSON.stringify(value) : String(value)
}

function labelTest(test: LabelTest): (state: PipelineState) => boolean {
  switch (test.kind) {
    case 'and': {
      const left = labelTest(test.left)
      const right = labelTest(test.right)
      return (state) => left(state) && right(state)
    }
    case 'or': {
      const left = labelTest(test.left)
      const right = labelTest(test.right)
      return (state) => left(state) || right(state)
    }
    case 'match': {
      const matches = matcherTest(test.matcher)
      return (state) => matches(labelValue(state, test.matcher.name) ?? '')
    }
    case 'compare': {
      const { name, op, value, unit } = test
      const read = unit === 'duration' ? parseDurationMs : unit === 'bytes' ? parseBytes : (text: string) => (text.trim() === '' ? undefined : Number(text))
      return (state) => {
        const text = labelValue(state, name)
        // An absent label fails the filter; one that is not a number passes it marked with an error, as Loki does.
        if (text === undefined) return false
        const actual = read(text)
        if (actual === undefined || Number.isNaN(actual)) {
          state.labels[ERROR_LABEL] = 'LabelFilterErr'
          return true
        }
        return compare(actual, op, value)
      }
    }
  }
}

function compare(actual: number, op: CompareOp, value: number): boolean {
  switch (op) {
    case '==':
      return actual === value
    case '!=':
      return actual !== value
    case '>':
      return actual > value
    case '>=':
      return actual >= value
    case '<':
      return actual < value
    case '<=':
      return actual <= value
  }
}

/** Loki's label names: characters outside [A-Za-z0-9_] become `_`, and a leading digit gets a `_` before it. */
function sanitizeLabelName(key: string): string {
  const trimmed = key.trim()
  if (trimmed === '') return trimmed
  return (/^[0-9]/.test(trimmed) ? `_${trimmed}` : trimmed).replace(/[^A-Za-z0-9_]/g, '_')
}

function setParsed(state: PipelineState, name: string, value: string) {
  if (name === '') return
  state.labels[Object.hasOwn(state.entry.stream, name) ? `${name}${EXTRACTED_SUFFIX}` : name] = value
}

/** `| json`: every string, number and boolean of the line's object as a label, nested keys joined by `_`. */
function parseJsonLabels(state: PipelineState) {
  let parsed: unknown
  try {
    parsed = JSON.parse(state.line)
  } catch (error) {
    state.labels[ERROR_LABEL] = 'JSONParserErr'
    state.labels[ERROR_DETAILS_LABEL] = (error as Error).message
    return
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    state.labels[ERROR_LABEL] = 'JSONParserErr'
    state.labels[ERROR_DETAILS_LABEL] = 'the line is not a JSON object'
    return
  }
  const walk = (object: Record<string, unknown>, prefix: string) => {
    for (const [key, value] of Object.entries(object)) {
      const name = prefix === '' ? sanitizeLabelName(key) : `${prefix}_${sanitizeLabelName(key)}`
      if (typeof value === 'string') setParsed(state, name, value)
      else if (typeof value === 'number' || typeof value === 'boolean') setParsed(state, name, String(value))
      else if (typeof value === 'object' && value !== null && !Array.isArray(value)) walk(value as Record<string, unknown>, name)
    }
  }
  walk(parsed as Record<string, unknown>, '')
}

/** `| logfmt`: key=value pairs (values may be double-quoted), a bare key as an empty value. */
function parseLogfmtLabels(state: PipelineState) {
  const pattern = /([^\s=]+)(?:=("(?:[^"\\]|\\.)*"|[^\s]*))?/g
  for (const [, key, raw] of state.line.matchAll(pattern)) {
    let value = raw ?? ''
    if (value.startsWith('"')) {
      try {
        value = JSON.parse(value) as string
      } catch {
        state.labels[ERROR_LABEL] = 'LogfmtParserErr'
        return
      }
    }
    setParsed(state, sanitizeLabelName(key), value)
  }
}

/** `line_format`: Go template actions `{{.label}}`, `{{__line__}}` and `{{__timestamp__}}`; any other action is refused by name. */
function lineTemplate(template: string): (state: PipelineState) => string {
  const parts: ((state: PipelineState) => string)[] = []
  let rest = template
  while (rest.length > 0) {
    const open = rest.indexOf('{{')
    if (open === -1) {
      const text = rest
      parts.push(() => text)
      break
    }
    const text = rest.slice(0, open)
    if (text) parts.push(() => text)
    const close = rest.indexOf('}}', open)
    if (close === -1) throw new LogqlError(`parse error: line_format template ${JSON.stringify(template)}: unclosed action`)
    const action = rest.slice(open + 2, close).replace(/^-?\s*/, '').replace(/\s*-?$/, '')
    rest = rest.slice(close + 2)
    const label = /^\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(action)
    if (label) parts.push((state) => labelValue(state, label[1]) ?? '')
    else if (action === '__line__') parts.push((state) => state.entry.line)
    else if (action === '__timestamp__') parts.push((state) => new Date(state.entry.ts).toISOString())
    else throw new LogqlError(`unsupported LogQL: line_format action {{${action}}} is not evaluated by the portal (only {{.label}}, {{__line__}} and {{__timestamp__}})`)
  }
  return (state) => parts.map((part) => part(state)).join('')
}
