import type { ComponentChildren } from 'preact'
import { usePaged, type Page } from '../api.ts'
import { LoadState, PagedTable, type Column } from '../components.tsx'
import { Link } from '../router.tsx'

/**
 * A detail read that answers one thing's current state with its `history` as a cursor-paged list
 * (a flag, a tenant, a video job): the state on top, the history below, its next pages on demand.
 */
export function StateWithHistory<S extends { history: Page<H> }, H>(props: {
  path: string
  back: [href: string, label: string]
  what: string
  title(state: S): ComponentChildren
  facts(state: S): ComponentChildren
  columns: Column<H>[]
  rowKey(item: H): string
}) {
  const list = usePaged<H, S>(props.path, (answer) => answer.history)
  const state = list.answer
  return (
    <section>
      <p>
        <Link href={props.back[0]}>← {props.back[1]}</Link>
      </p>
      {!state && <LoadState loading={list.loading} error={list.error} what={props.what} />}
      {state && (
        <>
          <h1>{props.title(state)}</h1>
          <div class="facts">{props.facts(state)}</div>
          <h2>History</h2>
          <PagedTable list={list} what="changes" rowKey={props.rowKey} columns={props.columns} />
        </>
      )}
    </section>
  )
}
