import { parser } from '@prometheus-io/lezer-promql'
import type { SyntaxNode } from '@lezer/common'
import { parseDurationMs } from '../durations.ts'
import type { BinaryOperator } from '../binary-operators.ts'

/** A PromQL query the portal refuses: a parse error, or a construct it does not evaluate (named). */
export class PromqlError extends Error {}

export type MatchOp = '=' | '!=' | '=~' | '!~'
export interface LabelMatcher {
  name: string
  op: MatchOp
  value: string
}

export interface Selector {
  matchers: LabelMatcher[]
  offsetMs: number
}

export type RangeFunction = 'rate' | 'increase' | 'sum_over_time' | 'avg_over_time' | 'min_over_time' | 'max_over_time' | 'count_over_time' | 'last_over_time'
export type AggregateOp = 'sum' | 'avg' | 'min' | 'max' | 'count' | 'topk' | 'bottomk'
export type BinaryOp = BinaryOperator

export type PromExpr =
  | { kind: 'number'; value: number }
  | { kind: 'selector'; selector: Selector }
  | { kind: 'range'; fn: RangeFunction; selector: Selector; rangeMs: number }
  | { kind: 'histogramQuantile'; quantile: PromExpr; buckets: PromExpr }
  | { kind: 'aggregate'; op: AggregateOp; by?: string[]; without?: string[]; parameter?: PromExpr; expr: PromExpr }
  | { kind: 'binary'; op: BinaryOp; bool: boolean; left: PromExpr; right: PromExpr }
  | { kind: 'negate'; expr: PromExpr }

const RANGE_FUNCTIONS = new Set<string>(['rate', 'increase', 'sum_over_time', 'avg_over_time', 'min_over_time', 'max_over_time', 'count_over_time', 'last_over_time'])
const AGGREGATES = new Set<string>(['sum', 'avg', 'min', 'max', 'count', 'topk', 'bottomk'])
const BINARY_OPS: Record<string, BinaryOp> = { Add: '+', Sub: '-', Mul: '*', Div: '/', Mod: '%', Pow: '^', EqlC: '==', Neq: '!=', Gtr: '>', Gte: '>=', Lss: '<', Lte: '<=' }

/** Parses PromQL with Prometheus' own grammar (@prometheus-io/lezer-promql) into what the portal evaluates. */
export function parsePromql(query: string): PromExpr {
  const tree = parser.parse(query)
  const cursor = tree.cursor()
  do {
    if (cursor.type.isError) throw new PromqlError(`1:${cursor.from + 1}: parse error: unexpected ${JSON.stringify(query.slice(cursor.from, cursor.from + 20) || 'end of input')}`)
  } while (cursor.next())
  const text = (node: SyntaxNode) => query.slice(node.from, node.to)
  const unsupported = (node: SyntaxNode, what: string): never => {
    throw new PromqlError(`unsupported PromQL: ${what} (${JSON.stringify(text(node))}) is not evaluated by the portal`)
  }
  const string = (node: SyntaxNode) => {
    const raw = text(node)
    if (raw.startsWith('`')) return raw.slice(1, -1)
    if (raw.startsWith("'")) return JSON.parse(`"${raw.slice(1, -1).replace(/"/g, '\\"')}"`) as string
    return JSON.parse(raw) as string
  }

  const selector = (node: SyntaxNode, offsetMs = 0): Selector => {
    const matchers: LabelMatcher[] = []
    const name = node.getChild('Identifier')
    if (name) matchers.push({ name: '__name__', op: '=', value: text(name) })
    const walk = (list: SyntaxNode | null) => {
      for (let child = list?.firstChild ?? null; child; child = child.nextSibling) {
        if (child.name === 'LabelMatchers') walk(child)
        else if (child.name === 'UnquotedLabelMatcher' || child.name === 'QuotedLabelMatcher') {
          const label = child.getChild('LabelName') ?? child.getChild('QuotedLabelName')
          const op = child.getChild('MatchOp')?.firstChild
          const value = child.getChild('StringLiteral')
          const ops: Record<string, MatchOp> = { EqlSingle: '=', Neq: '!=', EqlRegex: '=~', NeqRegex: '!~' }
          if (!label || !op || !value || !ops[op.name]) return unsupported(child, 'label matcher')
          matchers.push({ name: label.name === 'LabelName' ? text(label) : string(label), op: ops[op.name], value: string(value) })
        } else if (child.name === 'QuotedLabelName') {
          matchers.push({ name: '__name__', op: '=', value: string(child) })
        }
      }
    }
    walk(node.getChild('LabelMatchers'))
    if (matchers.length === 0) throw new PromqlError('vector selector must contain at least one non-empty matcher')
    return { matchers, offsetMs }
  }

  const duration = (node: SyntaxNode | null): number => {
    const ms = node ? parseDurationMs(text(node)) : undefined
    if (ms === undefined || ms <= 0) throw new PromqlError(`parse error: invalid duration ${node ? text(node) : ''}`)
    return ms
  }

  const args = (body: SyntaxNode | null): SyntaxNode[] => {
    const list: SyntaxNode[] = []
    for (let child = body?.firstChild ?? null; child; child = child.nextSibling) if (child.name !== '(' && child.name !== ')' && child.name !== ',') list.push(child)
    return list
  }

  const matrix = (node: SyntaxNode): { selector: Selector; rangeMs: number } => {
    let offsetMs = 0
    let inner = node
    if (inner.name === 'OffsetExpr') {
      offsetMs = duration(inner.getChild('OffsetDurationExpr')?.firstChild ?? null)
      inner = inner.firstChild!
    }
    if (inner.name !== 'MatrixSelector') return unsupported(inner, inner.name === 'SubqueryExpr' ? 'a subquery' : 'a range function argument that is not a range selector')
    const vector = inner.getChild('VectorSelector')
    if (!vector) return unsupported(inner, 'a subquery')
    return { selector: selector(vector, offsetMs), rangeMs: duration(inner.getChild('DurationExpr')?.firstChild ?? null) }
  }

  const expr = (node: SyntaxNode): PromExpr => {
    switch (node.name) {
      case 'PromQL':
        return expr(node.firstChild ?? unsupported(node, 'an empty query'))
      case 'NumberDurationLiteral': {
        const raw = text(node)
        const value = /^[0-9.eE+-]+$|^(Inf|NaN)$/i.test(raw) ? Number(raw.replace(/^inf$/i, 'Infinity')) : (parseDurationMs(raw) ?? NaN) / 1000
        return { kind: 'number', value }
      }
      case 'StringLiteral':
        return unsupported(node, 'a string')
      case 'ParenExpr':
        return expr(args(node).find((child) => child.name !== '(' && child.name !== ')') ?? unsupported(node, 'an empty parenthesis'))
      case 'UnaryExpr': {
        const inner = expr(node.lastChild!)
        return node.firstChild?.name === 'Sub' ? { kind: 'negate', expr: inner } : inner
      }
      case 'VectorSelector':
        return { kind: 'selector', selector: selector(node) }
      case 'OffsetExpr': {
        const inner = node.firstChild!
        if (inner.name !== 'VectorSelector') return unsupported(node, 'offset on anything but a selector')
        return { kind: 'selector', selector: selector(inner, duration(node.getChild('OffsetDurationExpr')?.firstChild ?? null)) }
      }
      case 'FunctionCall': {
        const name = text(node.getChild('FunctionIdentifier')!)
        const list = args(node.getChild('FunctionCallBody'))
        if (RANGE_FUNCTIONS.has(name)) {
          if (list.length !== 1) throw new PromqlError(`expected 1 argument in call to "${name}", got ${list.length}`)
          return { kind: 'range', fn: name as RangeFunction, ...matrix(list[0]) }
        }
        if (name === 'histogram_quantile') {
          if (list.length !== 2) throw new PromqlError(`expected 2 arguments in call to "histogram_quantile", got ${list.length}`)
          return { kind: 'histogramQuantile', quantile: expr(list[0]), buckets: expr(list[1]) }
        }
        return unsupported(node, `function ${name}`)
      }
      case 'AggregateExpr': {
        const op = text(node.getChild('AggregateOp')!)
        if (!AGGREGATES.has(op)) return unsupported(node, `aggregation ${op}`)
        const modifier = node.getChild('AggregateModifier')
        const labels = modifier ? modifier.getChild('GroupingLabels')!.getChildren('LabelName').map(text) : undefined
        const list = args(node.getChild('FunctionCallBody'))
        const parameterized = op === 'topk' || op === 'bottomk'
        if (list.length !== (parameterized ? 2 : 1)) throw new PromqlError(`wrong number of arguments for aggregate expression provided, expected ${parameterized ? 2 : 1}, got ${list.length}`)
        return {
          kind: 'aggregate',
          op: op as AggregateOp,
          ...(modifier?.getChild('Without') ? { without: labels } : modifier ? { by: labels } : {}),
          ...(parameterized ? { parameter: expr(list[0]) } : {}),
          expr: expr(list[list.length - 1]),
        }
      }
      case 'BinaryExpr': {
        const [left, right] = [node.firstChild!, node.lastChild!]
        const opNode = left.nextSibling!
        const op = BINARY_OPS[opNode.name]
        if (!op) return unsupported(opNode, `operator ${text(opNode)}`)
        const modifiers = node.getChildren('MatchingModifierClause')
        if (modifiers.length > 0 || node.getChild('On') || node.getChild('Ignoring')) return unsupported(node, 'vector matching (on, ignoring, group_left)')
        return { kind: 'binary', op, bool: node.getChild('BoolModifier') !== null, left: expr(left), right: expr(right) }
      }
      default:
        return unsupported(node, node.name === 'MatrixSelector' ? 'a range vector as the result' : node.name === 'SubqueryExpr' ? 'a subquery' : node.name === 'StepInvariantExpr' ? 'the @ modifier' : node.name)
    }
  }
  return expr(tree.topNode)
}
