import { parser } from '@grafana/lezer-traceql'
import type { SyntaxNode } from '@lezer/common'
import { parseDurationMs } from '../durations.ts'

/** A TraceQL query the portal refuses: a parse error, or a construct it does not evaluate (named). */
export class TraceqlError extends Error {}

export type FieldOp = '=' | '!=' | '>' | '>=' | '<' | '<=' | '=~' | '!~'

/** What a condition reads: a span's intrinsic, a trace's (traceDuration, rootName, rootServiceName), or an attribute. */
export type Field =
  | { kind: 'intrinsic'; name: 'duration' | 'name' | 'status' | 'statusMessage' | 'kind' | 'traceDuration' | 'rootName' | 'rootServiceName' }
  | { kind: 'attribute'; scope: 'resource' | 'span' | 'any'; key: string }

export type Literal = { type: 'string'; value: string } | { type: 'number'; value: number } | { type: 'boolean'; value: boolean } | { type: 'enum'; value: string } | { type: 'duration'; value: number }

export type Condition = { kind: 'all' } | { kind: 'compare'; field: Field; op: FieldOp; value: Literal } | { kind: 'and' | 'or'; left: Condition; right: Condition }

/** Spansets joined at the trace level: `{…} && {…}` holds when each has a matching span in the trace. */
export type TraceQuery = { kind: 'spanset'; condition: Condition } | { kind: 'and' | 'or'; left: TraceQuery; right: TraceQuery }

const INTRINSICS = new Set(['duration', 'name', 'status', 'statusMessage', 'kind', 'traceDuration', 'rootName', 'rootServiceName'])

/** Parses TraceQL with Grafana's grammar (@grafana/lezer-traceql) into the spanset filters the portal evaluates. */
export function parseTraceql(query: string): TraceQuery {
  const tree = parser.parse(query)
  const cursor = tree.cursor()
  do {
    if (cursor.type.isError) throw new TraceqlError(`parse error at line 1, col ${cursor.from + 1}: syntax error near ${JSON.stringify(query.slice(cursor.from, cursor.from + 20) || 'the end')}`)
  } while (cursor.next())
  const text = (node: SyntaxNode) => query.slice(node.from, node.to)
  const unsupported = (node: SyntaxNode, what: string): never => {
    throw new TraceqlError(`unsupported TraceQL: ${what} (${JSON.stringify(text(node))}) is not evaluated by the portal`)
  }

  const pipelineExpression = (node: SyntaxNode): TraceQuery => {
    const parts = node.getChildren('SpansetPipelineExpression')
    if (parts.length === 2) {
      const joiner = parts[0].nextSibling!
      if (joiner.name === 'And' || joiner.name === 'Or') return { kind: joiner.name === 'And' ? 'and' : 'or', left: pipelineExpression(parts[0]), right: pipelineExpression(parts[1]) }
      return unsupported(joiner, joiner.name === 'Pipe' ? 'a pipeline (|)' : `spanset operator ${text(joiner)}`)
    }
    if (parts.length === 1) return pipelineExpression(parts[0])
    const pipeline = node.getChild('SpansetPipeline')
    if (!pipeline) return unsupported(node, 'expression')
    const filters = pipeline.getChildren('SpansetFilter')
    const stages = pipeline.firstChild && pipeline.firstChild.from === pipeline.from && pipeline.firstChild.to === pipeline.to
    if (filters.length !== 1 || !stages) return unsupported(pipeline, 'a spanset pipeline')
    const expression = filters[0].getChild('FieldExpression')
    return { kind: 'spanset', condition: expression ? fieldExpression(expression) : { kind: 'all' } }
  }

  const fieldExpression = (node: SyntaxNode): Condition => {
    const parts = node.getChildren('FieldExpression')
    if (parts.length === 1 && !parts[0].nextSibling) return fieldExpression(parts[0])
    if (parts.length !== 2) return unsupported(node, 'condition')
    const operator = parts[0].nextSibling!
    if (operator.name === 'And' || operator.name === 'Or') return { kind: operator.name === 'And' ? 'and' : 'or', left: fieldExpression(parts[0]), right: fieldExpression(parts[1]) }
    if (operator.name !== 'FieldOp') return unsupported(operator, `operator ${text(operator)}`)
    const op = text(operator) as FieldOp
    if (!['=', '!=', '>', '>=', '<', '<=', '=~', '!~'].includes(op)) return unsupported(operator, `operator ${op}`)
    return { kind: 'compare', field: field(parts[0]), op, value: literal(parts[1]) }
  }

  const field = (node: SyntaxNode): Field => {
    const inner = node.firstChild
    if (!inner) return unsupported(node, 'field')
    if (inner.name === 'IntrinsicField') {
      const name = text(inner)
      if (!INTRINSICS.has(name)) return unsupported(inner, `intrinsic ${name}`)
      return { kind: 'intrinsic', name } as Field
    }
    if (inner.name === 'AttributeField') {
      const identifier = inner.getChild('Identifier')
      if (!identifier) return unsupported(inner, 'attribute')
      const scope = inner.getChild('Resource') ? 'resource' : inner.getChild('Span') ? 'span' : inner.firstChild?.from === identifier.from ? 'any' : undefined
      if (!scope) return unsupported(inner, 'attribute scope')
      return { kind: 'attribute', scope, key: text(identifier) }
    }
    return unsupported(inner, 'field')
  }

  const literal = (node: SyntaxNode): Literal => {
    const stat = node.getChild('Static')
    if (!stat) return unsupported(node, 'a value that is not a literal')
    const inner = stat.firstChild
    if (!inner) {
      const word = text(stat)
      if (word === 'true' || word === 'false') return { type: 'boolean', value: word === 'true' }
      return { type: 'enum', value: word }
    }
    const raw = text(inner)
    switch (inner.name) {
      case 'String':
        try {
          return { type: 'string', value: raw.startsWith('`') ? raw.slice(1, -1) : (JSON.parse(raw) as string) }
        } catch {
          throw new TraceqlError(`parse error: invalid string ${raw}`)
        }
      case 'Integer':
      case 'Float':
        return { type: 'number', value: Number(raw) }
      case 'Duration': {
        const ms = parseDurationMs(raw)
        if (ms === undefined) throw new TraceqlError(`parse error: invalid duration ${raw}`)
        return { type: 'duration', value: ms }
      }
      default:
        return unsupported(inner, 'value')
    }
  }

  const top = tree.topNode.getChild('SpansetPipelineExpression')
  if (!top) throw new TraceqlError('parse error at line 1, col 1: a TraceQL query is a spanset filter such as { resource.service.name = "api" }')
  return pipelineExpression(top)
}
