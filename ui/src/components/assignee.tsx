import type { TargetedSubmitEvent } from 'preact'
import { useContext } from 'preact/hooks'
import { api, useGet } from '../api.ts'
import { useAction } from '../components.tsx'
import { MeContext, useCanWrite } from '../identity.ts'
import type { components } from '../api-types.generated.ts'
import { Time } from './time.tsx'

type Assignment = components['schemas']['ErrorGroupAssignment']

/** Who the group is assigned to; an admin assigns it to a person of the organisation (or themselves), or to nobody. */
export function GroupAssignee({ fingerprint }: { fingerprint: string }) {
  const assignment = useGet<Assignment>(`/api/errors/groups/${fingerprint}/assignee`)
  const canWrite = useCanWrite()
  const me = useContext(MeContext)
  const [error, run] = useAction()
  const assign = (assignee: string | null) => run(() => api('PUT', `/api/errors/groups/${fingerprint}/assignee`, { assignee }).then(assignment.reload))
  const onSubmit = (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault()
    const assignee = String(new FormData(event.currentTarget).get('assignee') ?? '').trim()
    if (assignee) assign(assignee)
  }
  const current = assignment.data
  return (
    <div class="assignee" role="group" aria-label="Assignee">
      <span>
        {current?.assignee ? (
          <>
            Assigned to <strong>{current.assignee}</strong> <span class="muted">by {current.assignedBy}, <Time iso={current.assignedAt} /></span>
          </>
        ) : (
          <span class="muted">{current ? 'Nobody is assigned.' : '…'}</span>
        )}
      </span>
      {canWrite && current && (
        <form class="inline" onSubmit={onSubmit}>
          <input name="assignee" list="people" aria-label="Assign to" placeholder="a person" required />
          <datalist id="people">
            {current.people.map((person) => (
              <option value={person} />
            ))}
          </datalist>
          <button type="submit">Assign</button>
          {me && current.assignee !== me.name && (
            <button type="button" onClick={() => assign(me.name)}>
              Assign to me
            </button>
          )}
          {current.assignee && (
            <button type="button" onClick={() => assign(null)}>
              Unassign
            </button>
          )}
          {error && <span role="alert" class="error">{error}</span>}
        </form>
      )}
    </div>
  )
}
