import type { TargetedSubmitEvent } from 'preact'
import { useState } from 'preact/hooks'
import { api } from '../api.ts'
import { Badge, useAction } from '../components.tsx'
import type { components } from '../api-types.generated.ts'
import { Time } from './time.tsx'

type Schemas = components['schemas']
type ErrorGroup = Schemas['ErrorGroup']
type Triage = Schemas['ErrorGroupTriage']

/** The status, and why an unresolved group came back: an occurrence after it was resolved, or its ignore condition reached. */
export function StatusBadges({ group }: { group: Pick<ErrorGroup, 'status' | 'regressed' | 'unignored'> }) {
  return (
    <>
      <Badge value={group.status} />
      {group.regressed && <Badge value="regressed" />}
      {group.unignored && <Badge value="unignored" />}
    </>
  )
}

/** What holds the status, in words: the release it was resolved in, or the count, users and time it is ignored until. */
export function StatusConditions({ group }: { group: Pick<ErrorGroup, 'statusDetails' | 'count' | 'usersAffected'> }) {
  const { inNextRelease, latestRelease, inRelease, ignoreUntilCount, ignoreUntilUserCount, ignoreUntil } = group.statusDetails
  const more = (target: number, now: number, what: string) => `${target.toLocaleString()} ${what} (${Math.max(target - now, 0).toLocaleString()} more)`
  const until = [
    ignoreUntilCount !== null && more(ignoreUntilCount, group.count, 'events'),
    ignoreUntilUserCount !== null && more(ignoreUntilUserCount, group.usersAffected, 'users'),
    ignoreUntil && <Time iso={ignoreUntil} />,
  ].filter(Boolean)
  if (!inNextRelease && inRelease === null && until.length === 0) return null
  return (
    <span class="status-conditions">
      {inNextRelease && <>in the next release{latestRelease && ` (after ${latestRelease})`}</>}
      {inRelease !== null && <>in release {inRelease}</>}
      {until.length > 0 && (
        <>
          until{' '}
          {until.map((condition, index) => (
            <>
              {index > 0 && ' or '}
              {condition}
            </>
          ))}
          {until.length > 1 && ', whichever comes first'}
        </>
      )}{' '}
      ·
    </span>
  )
}

/** How long "Ignore until" ignores: more events, more users, time passing, or a date and time chosen. */
const IGNORE_UNTIL: [label: string, details: Triage['statusDetails'] | 'time'][] = [
  ['10 more events', { ignoreCount: 10 }],
  ['100 more events', { ignoreCount: 100 }],
  ['1,000 more events', { ignoreCount: 1000 }],
  ['10 more users', { ignoreUserCount: 10 }],
  ['100 more users', { ignoreUserCount: 100 }],
  ['an hour passes', { ignoreDuration: 60 }],
  ['a day passes', { ignoreDuration: 1440 }],
  ['a week passes', { ignoreDuration: 10080 }],
  ['a date and time…', 'time'],
]

/**
 * A group page's triage, as Sentry's: resolve now, in the next release or in a named release; ignore for good,
 * until more events, more users or a time; reopen. Plain Resolve and Ignore keep their names (the r and i shortcuts press them).
 */
export function GroupTriage({ group, onChange }: { group: Pick<ErrorGroup, 'fingerprint' | 'status' | 'releases'>; onChange(): void }) {
  const [error, run] = useAction()
  const [ignoreUntil, setIgnoreUntil] = useState(1)
  const chosen = IGNORE_UNTIL[ignoreUntil][1]
  const triage = (body: Triage) => run(() => api('PATCH', `/api/errors/groups/${group.fingerprint}`, body).then(onChange))
  const field = (event: TargetedSubmitEvent<HTMLFormElement>, name: string) => {
    event.preventDefault()
    return String(new FormData(event.currentTarget).get(name) ?? '').trim()
  }
  const resolveInRelease = (event: TargetedSubmitEvent<HTMLFormElement>) => {
    const release = field(event, 'release')
    if (release) triage({ status: 'resolved', statusDetails: { inRelease: release } })
  }
  const ignore = (event: TargetedSubmitEvent<HTMLFormElement>) => {
    // a datetime-local field's value is a time in the browser's zone; the API takes an instant
    const until = field(event, 'until')
    triage({ status: 'ignored', statusDetails: chosen === 'time' ? { ignoreUntil: new Date(until).toISOString() } : chosen })
  }
  return (
    <div class="actions triage" role="group" aria-label="Triage">
      {(['resolved', 'ignored', 'unresolved'] as const)
        .filter((status) => status !== group.status)
        .map((status) => (
          <button type="button" onClick={() => triage({ status })}>
            {{ resolved: 'Resolve', ignored: 'Ignore', unresolved: 'Reopen' }[status]}
          </button>
        ))}
      <button type="button" onClick={() => triage({ status: 'resolved', statusDetails: { inNextRelease: true } })} title="stays resolved for the releases seen so far; any other release reopens it">
        Resolve in next release
      </button>
      <form class="inline" onSubmit={resolveInRelease}>
        <input name="release" list="group-releases" aria-label="Release it is fixed in" placeholder="release" required />
        <datalist id="group-releases">
          {group.releases.map((release) => (
            <option value={release} />
          ))}
        </datalist>
        <button type="submit">Resolve in release</button>
      </form>
      <form class="inline" onSubmit={ignore}>
        <button type="submit">Ignore until</button>
        <select name="condition" aria-label="Ignore until" value={ignoreUntil} onChange={(event) => setIgnoreUntil(Number(event.currentTarget.value))}>
          {IGNORE_UNTIL.map(([label], index) => (
            <option value={index}>{label}</option>
          ))}
        </select>
        {chosen === 'time' && <input type="datetime-local" name="until" aria-label="Ignore until this time" required />}
      </form>
      {error && (
        <span role="alert" class="error">
          {error}
        </span>
      )}
    </div>
  )
}
