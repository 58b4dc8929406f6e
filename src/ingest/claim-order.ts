/**
 * The items that carry an idempotency key, in the one order every portal claims keys in: project,
 * then key. Claimed in arrival order, two transactions on two instances, each holding a key the
 * other then claims, deadlock on PostgreSQL. The sort is stable: of two items with one key, the
 * first to arrive claims it.
 */
export function inClaimOrder<T>(items: T[], claimOf: (item: T) => { projectId: string; key: string | undefined }): T[] {
  const keyed = items.filter((item) => claimOf(item).key !== undefined)
  return keyed.sort((a, b) => {
    const first = claimOf(a)
    const second = claimOf(b)
    return compareText(first.projectId, second.projectId) || compareText(first.key!, second.key!)
  })
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
