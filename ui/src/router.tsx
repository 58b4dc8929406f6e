import type { AnchorHTMLAttributes, TargetedMouseEvent } from 'preact'
import { useEffect, useState } from 'preact/hooks'

const listeners = new Set<() => void>()
window.addEventListener('popstate', () => listeners.forEach((listener) => listener()))

export function navigate(url: string, options: { replace?: boolean } = {}) {
  if (options.replace) history.replaceState(null, '', url)
  else history.pushState(null, '', url)
  listeners.forEach((listener) => listener())
  window.scrollTo(0, 0)
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
  const onClick = (event: TargetedMouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    event.preventDefault()
    navigate(props.href)
  }
  return <a {...props} onClick={onClick} />
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
