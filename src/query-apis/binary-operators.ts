/** The binary operators LogQL and PromQL share, with the same meaning in both. */
export type BinaryOperator = '+' | '-' | '*' | '/' | '%' | '^' | '==' | '!=' | '>' | '>=' | '<' | '<='

/** Without `bool`, a comparison filters: it keeps a sample (the value it is asked to keep) where it holds. */
export const COMPARISONS: ReadonlySet<BinaryOperator> = new Set<BinaryOperator>(['==', '!=', '>', '>=', '<', '<='])

export function applyBinaryOperator(op: BinaryOperator, a: number, b: number): number {
  switch (op) {
    case '+':
      return a + b
    case '-':
      return a - b
    case '*':
      return a * b
    case '/':
      return a / b
    case '%':
      return a % b
    case '^':
      return a ** b
    case '==':
      return Number(a === b)
    case '!=':
      return Number(a !== b)
    case '>':
      return Number(a > b)
    case '>=':
      return Number(a >= b)
    case '<':
      return Number(a < b)
    case '<=':
      return Number(a <= b)
  }
}

/** One step of a binary operation: its value, or for a comparison without `bool`, `keep` where it holds. */
export function combineSamples(op: BinaryOperator, bool: boolean, a: number | undefined, b: number | undefined, keep: number | undefined): number | undefined {
  if (a === undefined || b === undefined) return undefined
  const value = applyBinaryOperator(op, a, b)
  if (!COMPARISONS.has(op) || bool) return value
  return value === 1 ? keep : undefined
}
