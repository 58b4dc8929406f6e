import type { TargetedSubmitEvent } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, queryString, useGet } from '../api.ts'
import { useCanWrite } from '../identity.ts'
import { useAction } from '../components.tsx'
import { Link } from '../router.tsx'
import type { components } from '../api-types.generated.ts'
import { Time } from './time.tsx'

type RepositoryLinks = components['schemas']['RepositoryLinks']
type SuspectCommits = components['schemas']['SuspectCommits']

// One read of a project's links for every commit a page shows (a deploys table has fifty), not one per row.
const linksByProject = new Map<string, Promise<RepositoryLinks>>()
const listeners = new Set<() => void>()

function readLinks(project: string): Promise<RepositoryLinks> {
  let links = linksByProject.get(project)
  if (!links) {
    links = api<RepositoryLinks>('GET', `/api/modules/repository/links${queryString({ project_id: project })}`)
    links.catch(() => linksByProject.delete(project))
    linksByProject.set(project, links)
  }
  return links
}

export function useRepositoryLinks(project: string): RepositoryLinks | undefined {
  const [links, setLinks] = useState<RepositoryLinks>()
  const [version, setVersion] = useState(0)
  useEffect(() => {
    const changed = () => setVersion((v) => v + 1)
    listeners.add(changed)
    return () => listeners.delete(changed)
  }, [])
  useEffect(() => {
    let current = true
    readLinks(project).then((found) => current && setLinks(found), () => {})
    return () => {
      current = false
    }
  }, [project, version])
  return links
}

/** A commit's page on the code host, or undefined until an admin sets the host. */
export function commitHref(links: RepositoryLinks | undefined, commit: string, repo?: string | null): string | undefined {
  const repository = repo ?? links?.repo
  if (!links?.commitUrl || !repository) return undefined
  return links.commitUrl.replace('{repo}', repository).replace('{commit}', encodeURIComponent(commit))
}

/** A commit as its short SHA, a link to its page on the code host once the project names one. */
export function CommitLink({ project, commit, repo }: { project: string; commit: string | null | undefined; repo?: string | null }) {
  const links = useRepositoryLinks(project)
  if (!commit) return <span class="muted">—</span>
  const href = commitHref(links, commit, repo)
  if (!href) return <code title={`${commit} (no code host is set for this project: Repository → Code host)`}>{commit.slice(0, 10)}</code>
  return (
    <a href={href} target="_blank" rel="noopener noreferrer" title={`${commit} on ${links!.provider}`}>
      <code>{commit.slice(0, 10)}</code>
    </a>
  )
}

/** The code host setting: shown to everyone, changed by an admin (audited by the API). */
export function CodeHostSetting({ project }: { project: string }) {
  const links = useRepositoryLinks(project)
  const canWrite = useCanWrite()
  const [error, run] = useAction()
  const onSubmit = (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const repo = String(form.get('repo') ?? '').trim()
    run(async () => {
      await api('PUT', `/api/modules/repository/links${queryString({ project_id: project })}`, { provider: form.get('provider'), baseUrl: String(form.get('baseUrl') ?? '').trim(), ...(repo && { repo }) })
      linksByProject.delete(project)
      listeners.forEach((listener) => listener())
    })
  }
  return (
    <details class="code-host">
      <summary>Code host: {links?.provider ? `${links.provider} at ${links.baseUrl}` : 'not set (commits are not links yet)'}</summary>
      {canWrite ? (
        <form class="inline" onSubmit={onSubmit} aria-label="Code host">
          <label>
            <span>Host</span>
            <select name="provider">
              {(['github', 'gitlab', 'gitea'] as const).map((provider) => (
                <option value={provider} selected={(links?.provider ?? 'github') === provider}>
                  {{ github: 'GitHub', gitlab: 'GitLab', gitea: 'Gitea' }[provider]}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span>Address</span>
            <input name="baseUrl" type="url" required defaultValue={links?.baseUrl ?? 'https://github.com'} />
          </label>
          <label>
            <span>Repository of deploys’ commits (optional)</span>
            <input name="repo" placeholder={links?.repo ?? 'owner/name'} pattern="[^/\s]+/[^/\s]+" />
          </label>
          <button type="submit">Save code host</button>
          {error && <span role="alert" class="error">{error}</span>}
        </form>
      ) : (
        <p class="muted">An admin sets it.</p>
      )}
    </details>
  )
}

/** The commits the group's first release shipped, those that touched its in-app files first. */
export function SuspectCommitsPanel({ project, fingerprint }: { project: string; fingerprint: string }) {
  const answer = useGet<SuspectCommits>(`/api/errors/groups/${fingerprint}/suspect-commits`)
  const suspects = answer.data
  return (
    <section class="suspects" aria-label="Suspect commits">
      <h2>Suspect commits</h2>
      {answer.error && <p class="error">{answer.error.detail}</p>}
      {!suspects ? (
        !answer.error && <p class="muted">Loading …</p>
      ) : (
        <>
          <p class="muted">
            {suspects.reason}{' '}
            {suspects.compareUrl && (
              <a href={suspects.compareUrl} target="_blank" rel="noopener noreferrer">
                Compare {suspects.previousDeploy?.release} … {suspects.release}
              </a>
            )}{' '}
            {suspects.releaseDeploy && <Link href={`/p/${project}/deploys${queryString({ release: suspects.release, range: '30d' })}`}>Deploy of {suspects.release}</Link>}
          </p>
          {suspects.data.length === 0 ? (
            suspects.basis !== 'none' && <p class="muted">No commit was recorded between the two deploys.</p>
          ) : (
            <ol class="suspect-list">
              {suspects.data.map((commit) => (
                <li class={commit.matchedFiles.length > 0 ? 'suspect matched' : 'suspect'}>
                  <CommitLink project={project} commit={commit.commit} repo={commit.repo} /> <strong>{commit.message ?? '(no message)'}</strong> · {commit.author ?? 'unknown author'}
                  {commit.branch && ` on ${commit.branch}`} · <Time iso={commit.ts} />
                  {commit.matchedFiles.length > 0 && <div class="matched-files">touched {commit.matchedFiles.join(', ')}, in this error’s stack</div>}
                </li>
              ))}
            </ol>
          )}
        </>
      )}
    </section>
  )
}
