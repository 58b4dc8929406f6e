import { queryString, usePaged } from '../api.ts'
import { Filters, PagedTable, Time } from '../components.tsx'
import { TimeRangeControl, useTimeRange } from '../components/time.tsx'
import { Link, useFilters } from '../router.tsx'
import { CodeHostSetting, CommitLink } from '../components/commits.tsx'
import type { components } from '../api-types.generated.ts'

type RepositoryEvent = components['schemas']['RepositoryEvent']

type Branch = components['schemas']['RepositoryBranch']
type Author = components['schemas']['RepositoryAuthor']


/** Branches and authors; with `branch` or `author` in the URL, the commits themselves. */
export function RepositoryPage({ project }: { project: string }) {
  const { repo, branch, author } = useFilters(['repo', 'branch', 'author'])
  // Branches live for weeks: a month by default.
  const range = useTimeRange('30d')
  const filters = { repo, branch, author, from: range.from, to: range.listTo }
  const window = { repo, from: filters.from, to: filters.to }
  const commitsView = filters.branch !== undefined || filters.author !== undefined
  return (
    <section>
      <h1>Repository</h1>
      <Filters fields={[{ name: 'repo', label: 'Repository', placeholder: 'owner/name' }, { name: 'branch', label: 'Branch' }, { name: 'author', label: 'Author' }]} />
      <TimeRangeControl range={range} />
      <CodeHostSetting project={project} />
      {commitsView ? (
        <Commits project={project} filters={filters} />
      ) : (
        <>
          <h2>Branches</h2>
          <Branches project={project} window={window} />
          <h2>Authors</h2>
          <Authors project={project} window={window} />
        </>
      )}
    </section>
  )
}

function Branches({ project, window }: { project: string; window: Record<string, string | undefined> }) {
  const list = usePaged<Branch>(`/api/modules/repository/branches${queryString({ project_id: project, ...window })}`)
  return (
    <PagedTable
      list={list}
      what="branches"
      emptyText="No repository events yet: send one per push or commit, with repo, branch, commit and author."
      rowKey={(branch) => `${branch.repo}#${branch.branch}`}
      columns={[
        { title: 'Repository', render: (branch) => branch.repo },
        {
          title: 'Branch',
          render: (branch) => (branch.branch === null ? '—' : <Link href={`/p/${project}/repository${queryString({ repo: branch.repo, branch: branch.branch })}`}>{branch.branch}</Link>),
        },
        { title: 'Commits', numeric: true, render: (branch) => branch.commits },
        { title: 'Last commit', render: (branch) => <CommitLink project={project} commit={branch.lastCommit} repo={branch.repo} /> },
        { title: 'By', render: (branch) => branch.lastAuthor ?? '—' },
        { title: 'Pushed', render: (branch) => <Time iso={branch.lastPushedAt} /> },
      ]}
    />
  )
}

function Authors({ project, window }: { project: string; window: Record<string, string | undefined> }) {
  const list = usePaged<Author>(`/api/modules/repository/authors${queryString({ project_id: project, ...window })}`)
  return (
    <PagedTable
      list={list}
      what="authors"
      emptyText="No commit author yet."
      rowKey={(author) => author.author}
      columns={[
        { title: 'Author', render: (author) => <Link href={`/p/${project}/repository${queryString({ author: author.author })}`}>{author.author}</Link> },
        { title: 'Commits', numeric: true, render: (author) => author.commits },
        { title: 'Latest', render: (author) => <>{author.lastRepo}{author.lastBranch ? `@${author.lastBranch}` : ''} <CommitLink project={project} commit={author.lastCommit} repo={author.lastRepo} /></> },
        { title: 'Last commit', render: (author) => <Time iso={author.lastCommitAt} /> },
      ]}
    />
  )
}

function Commits({ project, filters }: { project: string; filters: Record<string, string | undefined> }) {
  const list = usePaged<RepositoryEvent>(`/api/modules/repository/events${queryString({ project_id: project, ...filters })}`)
  return (
    <>
      <p>
        <Link href={`/p/${project}/repository`}>← Branches and authors</Link>
      </p>
      <h2>Commits{filters.branch ? ` on ${filters.branch}` : ''}{filters.author ? ` by ${filters.author}` : ''}</h2>
      <PagedTable
        list={list}
        what="commits"
        emptyText="No commit matches."
        rowKey={(commit) => commit.id}
        columns={[
          { title: 'Commit', render: (commit) => <CommitLink project={project} commit={commit.data.commit} repo={commit.data.repo} /> },
          { title: 'Repository', render: (commit) => commit.data.repo },
          { title: 'Branch', render: (commit) => commit.data.branch ?? '—' },
          { title: 'Author', render: (commit) => commit.data.author ?? '—' },
          { title: 'When', render: (commit) => <Time iso={commit.ts} /> },
        ]}
      />
    </>
  )
}
