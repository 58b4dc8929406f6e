import { useEffect } from 'preact/hooks'
import { SECTIONS } from './modules.tsx'

const PORTAL = 'Observability Portal'

/**
 * The tab names the page, most specific first — "POST /checkout · Traces · shop — Observability Portal" —
 * so that many open tabs and the browser history can be told apart.
 */
export function pageTitle(path: string, projectName: string | undefined): string {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent)
  if (parts[0] !== 'p') return path === '/' ? `Projects — ${PORTAL}` : PORTAL
  const [, , section, ...rest] = parts
  const label = section === undefined ? 'Overview' : section === 'events' ? `${rest.shift() ?? ''} events` : (SECTIONS.find((entry) => entry.path === section)?.label ?? section)
  return [...rest.reverse(), label, projectName].filter(Boolean).join(' · ') + ` — ${PORTAL}`
}

export function useDocumentTitle(path: string, projectName: string | undefined) {
  const title = pageTitle(path, projectName)
  useEffect(() => {
    document.title = title
  }, [title])
}
