export interface StoredEvent {
  id: string
  ts: string
  data: Record<string, any>
}

/** Every event of a project in one module, read over HTTP page by page, oldest first. */
export async function storedEvents(baseUrl: string, adminToken: string, projectId: string, moduleBase = '/api/modules/logs'): Promise<StoredEvent[]> {
  const events: StoredEvent[] = []
  let cursor: string | null = null
  do {
    const query = new URLSearchParams({ project_id: projectId, limit: '500', ...(cursor ? { cursor } : {}) })
    const response = await fetch(`${baseUrl}${moduleBase}/events?${query}`, { headers: { authorization: `Bearer ${adminToken}` } })
    if (response.status !== 200) throw new Error(`events read: ${response.status} ${await response.text()}`)
    const page = (await response.json()) as { data: StoredEvent[]; nextCursor: string | null }
    events.push(...page.data)
    cursor = page.nextCursor
  } while (cursor)
  return events.reverse()
}

/** How many times each log message was stored. */
export function messageCounts(events: StoredEvent[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const event of events) counts.set(event.data.message, (counts.get(event.data.message) ?? 0) + 1)
  return counts
}
