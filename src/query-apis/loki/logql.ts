import { parser } from '@grafana/lezer-logql'
import type { SyntaxNode } from '@lezer/common'
import { parseBytes, parseDurationMs } from '../durations.ts'
import type { BinaryOperator } from '../binary-operators.ts'

/** A query the portal refuses, with Loki's words: a parse error, or a construct it does not evaluate (named). */
export class LogqlError extends Error {}

export type MatchOp = '=' | '!=' | '=~' | '!~'
export interface Matcher {
  name: string
  op: MatchOp
  value: string
}

export type LineFilterOp = '|=' | '!=' | '|~' | '!~'

/** A test of an entry's labels after `|`: string matchers, numeric, duration and byte comparisons, joined by and/or. */
export type LabelTest =
  | { kind: 'match'; matcher: Matcher }
  | { kind: 'compare'; name: string; op: CompareOp; value: number; unit: 'number' | 'duration' | 'bytes' }
  | { kind: 'and' | 'or'; left: LabelTest; right: LabelTest }
export type CompareOp = '==' | '!=' | '>' | '>=' | '<' | '<='

export type Stage =
  | { kind: 'line'; op: LineFilterOp; value: string }
  | { kind: 'json' | 'logfmt' }
  | { kind: 'labels'; test: LabelTest }
  | { kind: 'lineFormat'; template: string }

/** A stream selector and its pipeline: the log query, or the logs a range aggregation counts. */
export interface LogSelection {
  matchers: Matcher[]
  stages: Stage[]
}

export type RangeOp = 'count_over_time' | 'rate' | 'bytes_over_time' | 'bytes_rate'
export type VectorOp = 'sum' | 'avg' | 'min' | 'max' | 'count' | 'topk' | 'bottomk'
export type ArithmeticOp = BinaryOperator

export type MetricExpr =
  | { kind: 'range'; op: RangeOp; selection: LogSelection; rangeMs: number; offsetMs: number; grouping?: Grouping }
  | { kind: 'aggregate'; op: VectorOp; grouping?: Grouping; parameter?: number; expr: MetricExpr }
  | { kind: 'binary'; op: ArithmeticOp; bool: boolean; left: MetricExpr; right: MetricExpr }
  | { kind: 'number'; value: number }
  | { kind: 'vector'; value: number }

export interface Grouping {
  without: boolean
  labels: string[]
}

export type LogqlQuery = { kind: 'logs'; selection: LogSelection } | { kind: 'metric'; expr: MetricExpr }

/** Parses LogQL with Grafana's grammar (@grafana/lezer-logql) into what the portal evaluates. */
export function parseLogql(query: string): LogqlQuery {
  const tree = parser.parse(query)
  const cursor = tree.cursor()
  do {
    if (cursor.type.isError) {
      const at = cursor.from
      throw new LogqlError(`parse error at line 1, col ${at + 1}: syntax error near ${JSON.stringify(query.slice(at, at + 20) || 'the end')}`)
    }
  } while (cursor.next())
  const text = (node: SyntaxNode) => query.slice(node.from, node.to)
  const expr = tree.topNode.firstChild
  if (!expr || expr.name !== 'Expr') throw new LogqlError('parse error at line 1, col 1: syntax error: unexpected end of input')
  return new Reader(text).query(expr)
}

class Reader {
  constructor(private readonly text: (node: SyntaxNode) => string) {}

  unsupported(node: SyntaxNode, what?: string): never {
    throw new LogqlError(`unsupported LogQL: ${what ?? node.name} (${JSON.stringify(this.text(node))}) is not evaluated by the portal`)
  }

  query(expr: SyntaxNode): LogqlQuery {
    const inner = expr.firstChild!
    if (inner.name === 'LogExpr') return { kind: 'logs', selection: this.logExpr(inner) }
    if (inner.name === 'MetricExpr') return { kind: 'metric', expr: this.metric(inner) }
    return this.unsupported(inner)
  }

  logExpr(node: SyntaxNode): LogSelection {
    const selector = node.getChild('Selector')
    if (!selector) return this.unsupported(node)
    const pipeline = node.getChild('PipelineExpr')
    return { matchers: this.matchers(selector), stages: pipeline ? this.pipeline(pipeline) : [] }
  }

  /** The selector's matchers; Loki's rule holds: one of them must select something narrower than "any value, or none". */
  matchers(selector: SyntaxNode): Matcher[] {
    const matchers = this.collectMatchers(selector)
    if (!matchers.some(selectsNonEmpty)) {
      throw new LogqlError(
        'queries require at least one regexp or equality matcher that does not have an empty-compatible value. For instance, app=~".*" does not meet this requirement, but app=~".+" will',
      )
    }
    return matchers
  }

  collectMatchers(selector: SyntaxNode): Matcher[] {
    const matchers: Matcher[] = []
    const walk = (node: SyntaxNode | null) => {
      for (let child = node?.firstChild ?? null; child; child = child.nextSibling) {
        if (child.name === 'Matchers') walk(child)
        else if (child.name === 'Matcher') matchers.push(this.matcher(child))
      }
    }
    walk(selector)
    return matchers
  }

  matcher(node: SyntaxNode): Matcher {
    const name = node.getChild('Identifier')
    const value = node.getChild('String')
    const op = name?.nextSibling
    if (!name || !value || !op) return this.unsupported(node, 'matcher')
    const ops: Record<string, MatchOp> = { Eq: '=', Neq: '!=', Re: '=~', Nre: '!~' }
    if (!ops[op.name]) return this.unsupported(op, 'matcher operator')
    return { name: this.text(name), op: ops[op.name], value: this.string(value) }
  }

  string(node: SyntaxNode): string {
    const raw = this.text(node)
    if (raw.startsWith('`')) return raw.slice(1, -1)
    try {
      return JSON.parse(raw) as string
    } catch {
      throw new LogqlError(`parse error: invalid string ${raw}`)
    }
  }

  pipeline(node: SyntaxNode): Stage[] {
    const stages: Stage[] = []
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child.name === 'PipelineExpr') stages.push(...this.pipeline(child))
      else if (child.name === 'PipelineStage') stages.push(...this.stage(child))
    }
    return stages
  }

  stage(node: SyntaxNode): Stage[] {
    for (let child = node.firstChild; child; child = child.nextSibling) {
      switch (child.name) {
        case 'Pipe':
          continue
        case 'LineFilters':
          return this.lineFilters(child)
        case 'LabelParser': {
          const kind = child.firstChild?.name
          if (kind === 'Json') return [{ kind: 'json' }]
          if (kind === 'Logfmt') return [{ kind: 'logfmt' }]
          return this.unsupported(child, 'parser')
        }
        case 'LogfmtParser':
          if (child.firstChild?.nextSibling) return this.unsupported(child, 'logfmt with flags or expressions')
          return [{ kind: 'logfmt' }]
        case 'LabelFilter':
          return [{ kind: 'labels', test: this.labelTest(child) }]
        case 'LineFormatExpr':
          return [{ kind: 'lineFormat', template: this.string(child.getChild('String')!) }]
        default:
          return this.unsupported(child, stageName(child.name))
      }
    }
    return this.unsupported(node)
  }

  lineFilters(node: SyntaxNode): Stage[] {
    const stages: Stage[] = []
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child.name === 'LineFilters') stages.push(...this.lineFilters(child))
      else if (child.name === 'LineFilter') {
        const op = child.getChild('Filter')?.firstChild
        const value = child.getChild('String')
        const ops: Record<string, LineFilterOp> = { PipeExact: '|=', Neq: '!=', PipeMatch: '|~', Nre: '!~' }
        if (!op || !value || !ops[op.name] || child.getChild('Or') || child.getChild('FilterOp')) return this.unsupported(child, 'line filter')
        stages.push({ kind: 'line', op: ops[op.name], value: this.string(value) })
      }
    }
    return stages
  }

  labelTest(node: SyntaxNode): LabelTest {
    const parts: SyntaxNode[] = []
    let joiner: 'and' | 'or' | undefined
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child.name === 'And' || child.name === 'Comma') joiner = 'and'
      else if (child.name === 'Or') joiner = 'or'
      else if (child.name !== '(' && child.name !== ')') parts.push(child)
    }
    if (parts.length === 2 && joiner) return { kind: joiner, left: this.labelTest(parts[0]), right: this.labelTest(parts[1]) }
    // `a="x" b="y"` (no joiner) means and, as in Loki.
    if (parts.length === 2) return { kind: 'and', left: this.labelTest(parts[0]), right: this.labelTest(parts[1]) }
    if (parts.length !== 1) return this.unsupported(node, 'label filter')
    const [part] = parts
    switch (part.name) {
      case 'LabelFilter':
        return this.labelTest(part)
      case 'Matcher':
        return { kind: 'match', matcher: this.matcher(part) }
      case 'NumberFilter':
        return this.compare(part, 'number')
      case 'UnitFilter':
        return this.compare(part.firstChild!, part.firstChild!.name === 'BytesFilter' ? 'bytes' : 'duration')
      default:
        return this.unsupported(part, 'label filter')
    }
  }

  compare(node: SyntaxNode, unit: 'number' | 'duration' | 'bytes'): LabelTest {
    const name = node.getChild('Identifier')
    const op = name?.nextSibling
    const ops: Record<string, CompareOp> = { Eq: '==', Eql: '==', Neq: '!=', Gtr: '>', Gte: '>=', Lss: '<', Lte: '<=' }
    const valueNode = op?.nextSibling
    if (!name || !op || !ops[op.name] || !valueNode) return this.unsupported(node, 'label filter')
    const raw = this.text(valueNode)
    const value = unit === 'duration' ? parseDurationMs(raw) : unit === 'bytes' ? parseBytes(raw) : Number(raw)
    if (value === undefined || Number.isNaN(value)) throw new LogqlError(`parse error: invalid ${unit} ${raw}`)
    return { kind: 'compare', name: this.text(name), op: ops[op.name], value, unit }
  }

  metric(node: SyntaxNode): MetricExpr {
    const inner = node.firstChild!
    switch (inner.name) {
      case 'RangeAggregationExpr':
        return this.rangeAggregation(inner)
      case 'VectorAggregationExpr':
        return this.vectorAggregation(inner)
      case 'BinOpExpr':
        return this.binary(inner)
      case 'LiteralExpr': {
        const sign = inner.getChild('Sub') ? -1 : 1
        return { kind: 'number', value: sign * Number(this.text(inner.getChild('Number')!)) }
      }
      case 'VectorExpr':
        return { kind: 'vector', value: Number(this.text(inner.getChild('Number')!)) }
      case 'ParenthesisExpr':
      case 'MetricExpr':
        return this.metric(inner.getChild('MetricExpr') ?? inner)
      default:
        return this.unsupported(inner, metricName(inner.name))
    }
  }

  rangeAggregation(node: SyntaxNode): MetricExpr {
    const opNode = node.getChild('RangeOp')?.firstChild
    const ops: Record<string, RangeOp> = { CountOverTime: 'count_over_time', Rate: 'rate', BytesOverTime: 'bytes_over_time', BytesRate: 'bytes_rate' }
    if (!opNode || !ops[opNode.name]) return this.unsupported(opNode ?? node, `range aggregation ${opNode ? this.text(opNode) : ''}`.trim())
    if (node.getChild('Number')) return this.unsupported(node, 'range aggregation parameter')
    const range = node.getChild('LogRangeExpr')
    if (!range) return this.unsupported(node)
    const selector = range.getChild('Selector')
    if (!selector) return this.unsupported(range)
    if (range.getChild('UnwrapExpr')) return this.unsupported(range.getChild('UnwrapExpr')!, 'unwrap')
    const pipeline = range.getChild('PipelineExpr')
    const rangeMs = parseDurationMs(this.text(range.getChild('Range')!.getChild('Duration')!))
    const offset = range.getChild('OffsetExpr')?.getChild('Duration')
    const grouping = node.getChild('Grouping')
    if (rangeMs === undefined || rangeMs <= 0) throw new LogqlError(`parse error: invalid range ${this.text(range.getChild('Range')!)}`)
    return {
      kind: 'range',
      op: ops[opNode.name],
      selection: { matchers: this.matchers(selector), stages: pipeline ? this.pipeline(pipeline) : [] },
      rangeMs,
      offsetMs: offset ? (parseDurationMs(this.text(offset)) ?? 0) : 0,
      ...(grouping ? { grouping: this.grouping(grouping) } : {}),
    }
  }

  vectorAggregation(node: SyntaxNode): MetricExpr {
    const opNode = node.getChild('VectorOp')?.firstChild
    const ops: Record<string, VectorOp> = { Sum: 'sum', Avg: 'avg', Min: 'min', Max: 'max', Count: 'count', Topk: 'topk', Bottomk: 'bottomk' }
    if (!opNode || !ops[opNode.name]) return this.unsupported(opNode ?? node, `aggregation ${opNode ? this.text(opNode) : ''}`.trim())
    const op = ops[opNode.name]
    const inner = node.getChild('MetricExpr')
    if (!inner) return this.unsupported(node)
    const parameter = node.getChild('Number')
    if ((op === 'topk' || op === 'bottomk') && !parameter) throw new LogqlError(`parse error: ${op} needs a parameter`)
    const grouping = node.getChild('Grouping')
    return {
      kind: 'aggregate',
      op,
      expr: this.metric(inner),
      ...(grouping ? { grouping: this.grouping(grouping) } : {}),
      ...(parameter ? { parameter: Number(this.text(parameter)) } : {}),
    }
  }

  grouping(node: SyntaxNode): Grouping {
    const labels: string[] = []
    const list = node.getChild('Labels')
    for (let child = list?.firstChild ?? null; child; child = child.nextSibling) if (child.name === 'Identifier') labels.push(this.text(child))
    return { without: node.getChild('Without') !== null, labels }
  }

  binary(node: SyntaxNode): MetricExpr {
    const sides = node.getChildren('Expr')
    const modifier = node.getChild('BinOpModifier')
    if (sides.length !== 2) return this.unsupported(node)
    const opNode = sides[0].nextSibling!
    const ops: Record<string, ArithmeticOp> = { Add: '+', Sub: '-', Mul: '*', Div: '/', Mod: '%', Pow: '^', Eql: '==', Neq: '!=', Gtr: '>', Gte: '>=', Lss: '<', Lte: '<=' }
    if (!ops[opNode.name]) return this.unsupported(opNode, `binary operator ${this.text(opNode)}`)
    const modifierText = modifier ? this.text(modifier).trim() : ''
    if (modifierText !== '' && modifierText !== 'bool') return this.unsupported(modifier!, 'vector matching')
    const side = (expr: SyntaxNode) => {
      const inner = expr.firstChild!
      if (inner.name !== 'MetricExpr') return this.unsupported(inner, 'log query inside a metric expression')
      return this.metric(inner)
    }
    return { kind: 'binary', op: ops[opNode.name], bool: modifierText === 'bool', left: side(sides[0]), right: side(sides[1]) }
  }
}

function selectsNonEmpty(matcher: Matcher): boolean {
  if (matcher.op === '=') return matcher.value !== ''
  if (matcher.op !== '=~') return false
  try {
    return !new RegExp(`^(?:${matcher.value.replace(/^\(\?i\)/, '')})$`).test('')
  } catch {
    throw new LogqlError(`parse error: invalid regular expression ${JSON.stringify(matcher.value)} for ${matcher.name}`)
  }
}

function stageName(name: string): string {
  const names: Record<string, string> = {
    JsonExpressionParser: 'json with expressions',
    LineFormatExpr: 'line_format',
    LabelFormatExpr: 'label_format',
    DropLabelsExpr: 'drop',
    KeepLabelsExpr: 'keep',
    DecolorizeExpr: 'decolorize',
    DistinctFilter: 'distinct',
  }
  return names[name] ?? name
}

function metricName(name: string): string {
  return ({ LabelReplaceExpr: 'label_replace' } as Record<string, string>)[name] ?? name
}
