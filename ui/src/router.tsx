import type { AnchorHTMLAttributes, TargetedMouseEvent } from 'preact'
import { useEffect, useState } from 'preact/hooks'

const listeners = new Set<() => void>()
window.addEventListener('popstate', () => listeners.forEach((listener) => listener()))

export function navigate(url: string, options: { replace?: boolean } = {}) {
  if (options.replace) history.replaceState(null, '', url)
  else history.pushState(null, '', url)
  listeners.forEach((listener) => listener())
  // A replaced URL records a state of the same page (a span opened, a zone switched): the reader stays where they are.
  if (!options.replace) window.scrollTo(0, 0)
}

/** The time range, as the range control keeps it: carried as a whole, never mixed with a target's own. */
const TIME_PARAMS = ['range', 'from', 'to']
/** What a person is looking at, beside the time: carried when the target does not set it. */
const SCOPE_PARAMS = ['service', 'environment', 'release']

/**
 * `href` with the context of the current page added (its time range, service, environment and release), when it
 * leads to another page of the same project and does not set them itself: the investigation keeps its frame
 * from page to page. A page that does not take one of them ignores it, and passes it on.
 */
export function withContext(href: string): string {
  const project = /^\/p\/[^/?#]+/.exec(location.pathname)?.[0]
  if (!project || !href.startsWith(`${project}/`) && href !== project) return href
  const target = new URL(href, location.origin)
  if (target.pathname === location.pathname) return href
  const current = new URLSearchParams(location.search)
  const carried = new URLSearchParams(target.search)
  if (!TIME_PARAMS.some((name) => carried.has(name))) for (const name of TIME_PARAMS) if (current.get(name)) carried.set(name, current.get(name)!)
  for (const name of SCOPE_PARAMS) if (!carried.has(name) && current.get(name)) carried.set(name, current.get(name)!)
  const search = carried.toString()
  return target.pathname + (search ? `?${search}` : '') + target.hash
}

interface Location {
  path: string
  params: URLSearchParams
}

/** The current path and query; re-renders on every navigation. */
export function useLocation(): Location {
  const [, setTick] = useState(0)
  useEffect(() => {
    const listener = () => setTick((tick) => tick + 1)
    listeners.add(listener)
    return () => listeners.delete(listener)
  }, [])
  return { path: location.pathname, params: new URLSearchParams(location.search) }
}

/** The current URL with some query parameters replaced (empty values removed): filters live in the URL, so views can be shared. */
export function withParams(updates: Record<string, string | undefined>): string {
  const params = new URLSearchParams(location.search)
  for (const [name, value] of Object.entries(updates)) {
    if (value === undefined || value === '') params.delete(name)
    else params.set(name, value)
  }
  const search = params.toString()
  return location.pathname + (search ? `?${search}` : '')
}

/** A real link (keyboard, middle-click and "open in new tab" work) that navigates in place on a plain click. */
export function Link(props: AnchorHTMLAttributes & { href: string }) {
  const href = withContext(props.href)
  const onClick = (event: TargetedMouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    event.preventDefault()
    navigate(href)
  }
  return <a {...props} href={href} onClick={onClick} />
}

/** The named segments of `path` when it matches `pattern` (`/p/:project/logs`), else null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const names: string[] = []
  const source = pattern.replace(/:(\w+)/g, (_, name: string) => {
    names.push(name)
    return '([^/]+)'
  })
  const found = new RegExp(`^${source}/?$`).exec(path)
  if (!found) return null
  return Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(found[index + 1])]))
}

/** The named query parameters of the current URL (undefined when absent): a page's filters, passed on to the API. */
export function useFilters(names: string[]): Record<string, string | undefined> {
  const { params } = useLocation()
  return Object.fromEntries(names.map((name) => [name, params.get(name) ?? undefined]))
}
