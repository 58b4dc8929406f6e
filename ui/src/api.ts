import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import type { components } from './api-types.generated.ts'

const TOKEN_KEY = 'portal.accessToken'

/** The access token lives for the browser tab's session only (sessionStorage), never in a cookie or localStorage. */
export const session = {
  token: () => sessionStorage.getItem(TOKEN_KEY),
  keep: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  forget: () => sessionStorage.removeItem(TOKEN_KEY),
}

/** An RFC 9457 problem answered by the portal, or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(detail)
  }
}

let onUnauthorized: () => void = () => {}
/** What to do when the portal no longer accepts the token (revoked while signed in): back to sign-in. */
export function whenUnauthorized(handler: () => void) {
  onUnauthorized = handler
}

export async function api<T>(method: string, path: string, body?: unknown, token = session.token()): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (token) headers.authorization = `Bearer ${token}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  let response: Response
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  } catch (error) {
    throw new ApiError(0, 'network_error', `the portal could not be reached (${(error as Error).message})`)
  }
  if (response.status === 204) return undefined as T
  const answer = await response.json().catch(() => null)
  if (response.ok) return answer as T
  if (response.status === 401 && token === session.token()) onUnauthorized()
  throw new ApiError(response.status, answer?.code ?? `http_${response.status}`, answer?.detail ?? response.statusText)
}

/** `?a=1&b=2` from the defined, non-empty values. */
export function queryString(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(name, String(value))
  const text = search.toString()
  return text ? `?${text}` : ''
}

/** The list envelope of every list read (`ProjectList`, `FlagStateList`, …), over any item. */
export type Page<T> = Omit<components['schemas']['ProjectList'], 'data'> & { data: T[] }

export interface Loaded<T> {
  data?: T
  error?: ApiError
  loading: boolean
  reload(): void
}

/** One GET, made again when `path` changes; `null` waits. */
export function useGet<T>(path: string | null): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: path !== null })
  const [version, setVersion] = useState(0)
  useEffect(() => {
    if (path === null) return
    let current = true
    setState((previous) => ({ data: previous.data, loading: true }))
    api<T>('GET', path).then(
      (data) => current && setState({ data, loading: false }),
      (error: ApiError) => current && setState({ error, loading: false }),
    )
    return () => {
      current = false
    }
  }, [path, version])
  return { ...state, reload: useCallback(() => setVersion((v) => v + 1), []) }
}

export interface Paged<T, A = Page<T>> {
  /** the whole answer of the first page (a detail read whose `history` is the list) */
  answer: A | undefined
  items: T[]
  nextCursor: string | null
  error: ApiError | undefined
  loading: boolean
  /**
   * the first page has answered (or failed) once: a page's secondary reads (histograms, counts) wait for it, so
   * that they do not go ahead of the list into the portal's SQLite reader thread, which answers one at a time
   */
  answered: boolean
  /** fetch the page after the last one shown, with the API's cursor */
  more(): void
  /** start again from the first page (after a change, or on auto-refresh) */
  reload(): void
}

/**
 * A cursor-paged list: the first page of `path`, then each next page appended on `more()`.
 * `pick` finds the list in an answer that holds more than the list.
 */
export function usePaged<T, A = Page<T>>(path: string | null, pick: (answer: A) => Page<T> = (answer) => answer as Page<T>): Paged<T, A> {
  const [answer, setAnswer] = useState<A>()
  const [items, setItems] = useState<T[]>([])
  const [nextCursor, setNextCursor] = useState<string | null>(null)
  const [error, setError] = useState<ApiError>()
  const [loading, setLoading] = useState(path !== null)
  const [answered, setAnswered] = useState(false)
  const [version, setVersion] = useState(0)
  const request = useRef(0)
  const picked = useRef(pick)
  picked.current = pick

  const fetchPage = useCallback(
    (cursor: string | null) => {
      if (path === null) return
      const id = ++request.current
      setLoading(true)
      const separator = path.includes('?') ? '&' : '?'
      api<A>('GET', cursor ? `${path}${separator}cursor=${encodeURIComponent(cursor)}` : path).then(
        (whole) => {
          if (id !== request.current) return
          const page = picked.current(whole)
          if (!cursor) setAnswer(whole)
          setItems((shown) => (cursor ? [...shown, ...page.data] : page.data))
          setNextCursor(page.nextCursor)
          setError(undefined)
          setLoading(false)
          setAnswered(true)
        },
        (failure: ApiError) => {
          if (id !== request.current) return
          setError(failure)
          setLoading(false)
          setAnswered(true)
        },
      )
    },
    [path],
  )

  useEffect(() => fetchPage(null), [fetchPage, version])
  return {
    answer,
    items,
    nextCursor,
    error,
    loading,
    answered,
    more: () => nextCursor && fetchPage(nextCursor),
    reload: useCallback(() => setVersion((v) => v + 1), []),
  }
}
