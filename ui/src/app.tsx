import type { ComponentType, TargetedSubmitEvent } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, ApiError, session, useGet, whenUnauthorized } from './api.ts'
import { MeContext, type Me } from './identity.ts'
import { Link, match, navigate, useLocation } from './router.tsx'
import { ProjectsPage, KeysPage, type Project } from './pages/projects.tsx'
import { ErrorGroupPage, ErrorGroupsPage } from './pages/errors.tsx'
import { LogsPage } from './pages/logs.tsx'
import { TracePage, TracesPage } from './pages/traces.tsx'
import { DeploysPage } from './pages/deploys.tsx'
import { ReleasesPage } from './pages/releases.tsx'
import { CostsPage } from './pages/costs.tsx'
import { PerformancePage } from './pages/performance.tsx'
import { FlagPage, FlagsPage } from './pages/flags.tsx'
import { DeliveryPage, DeliveriesPage, EndpointsPage } from './pages/webhooks.tsx'
import { AuditPage } from './pages/audit.tsx'
import { TenantPage, TenantsPage } from './pages/tenants.tsx'
import { VideoJobPage, VideoJobsPage } from './pages/video.tsx'
import { StoragePage } from './pages/storage.tsx'
import { ConfigsPage } from './pages/configs.tsx'
import { RepositoryPage } from './pages/repository.tsx'
import { ModuleEventsPage } from './pages/module-events.tsx'
import { OverviewPage } from './pages/overview.tsx'
import { AlertRulePage, AlertsPage } from './pages/alerts.tsx'
import { navigationEntries, useModules } from './modules.tsx'
import { useDocumentTitle } from './title.ts'
import { KeyboardShortcuts } from './components/shortcuts.tsx'

// Each page takes its pattern's named segments as props.
const ROUTES: [pattern: string, page: ComponentType<any>][] = [
  ['/', ProjectsPage],
  ['/p/:project', OverviewPage],
  ['/p/:project/configs', ConfigsPage],
  ['/p/:project/repository', RepositoryPage],
  ['/p/:project/events/:type', ModuleEventsPage],
  ['/p/:project/keys', KeysPage],
  ['/p/:project/storage', StoragePage],
  ['/p/:project/errors', ErrorGroupsPage],
  ['/p/:project/errors/:fingerprint', ErrorGroupPage],
  ['/p/:project/logs', LogsPage],
  ['/p/:project/traces', TracesPage],
  ['/p/:project/traces/:traceId', TracePage],
  ['/p/:project/deploys', DeploysPage],
  ['/p/:project/releases', ReleasesPage],
  ['/p/:project/costs', CostsPage],
  ['/p/:project/performance', PerformancePage],
  ['/p/:project/flags', FlagsPage],
  ['/p/:project/flags/:flag', FlagPage],
  ['/p/:project/webhooks', EndpointsPage],
  ['/p/:project/webhooks/deliveries', DeliveriesPage],
  ['/p/:project/webhooks/deliveries/:delivery', DeliveryPage],
  ['/p/:project/audit', AuditPage],
  ['/p/:project/tenants', TenantsPage],
  ['/p/:project/tenants/:tenant', TenantPage],
  ['/p/:project/video', VideoJobsPage],
  ['/p/:project/video/:job', VideoJobPage],
  ['/p/:project/alerts', AlertsPage],
  ['/p/:project/alerts/:rule', AlertRulePage],
]

export function App() {
  const [me, setMe] = useState<Me | null>(null)
  // With a token kept from earlier in this tab, the shell and its page render at once, their reads going out
  // beside the check of the token rather than a round trip after it; a token that /api/me (or any read)
  // refuses signs out.
  const [signedIn, setSignedIn] = useState(session.token() !== null)
  const [signInError, setSignInError] = useState<string>()

  const signOut = (reason?: string) => {
    session.forget()
    setMe(null)
    setSignedIn(false)
    setSignInError(reason)
  }
  useEffect(() => {
    whenUnauthorized(() => signOut('Your session ended: the portal no longer accepts this token. Sign in again.'))
    const token = session.token()
    if (!token) return
    api<Me>('GET', '/api/me', undefined, token).then(setMe, (error: ApiError) => signOut(error.detail))
  }, [])

  if (!signedIn) {
    return (
      <SignIn
        error={signInError}
        onSignedIn={(identity) => {
          setMe(identity)
          setSignedIn(true)
        }}
      />
    )
  }
  return (
    <MeContext.Provider value={me}>
      <Shell me={me} onSignOut={() => signOut()} />
    </MeContext.Provider>
  )
}

function SignIn(props: { error?: string; onSignedIn(me: Me): void }) {
  const [error, setError] = useState(props.error)
  const [busy, setBusy] = useState(false)
  const onSubmit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault()
    const token = String(new FormData(event.currentTarget).get('token') ?? '').trim()
    setBusy(true)
    try {
      const me = await api<Me>('GET', '/api/me', undefined, token)
      session.keep(token)
      props.onSignedIn(me)
    } catch (failure) {
      setError((failure as ApiError).detail)
    } finally {
      setBusy(false)
    }
  }
  return (
    <main class="signin">
      <h1>Observability Portal</h1>
      <form onSubmit={onSubmit}>
        <label>
          <span>Access token</span>
          <input name="token" type="password" autocomplete="off" required placeholder="pat_…" autofocus />
        </label>
        <p class="muted">Kept in this browser tab only, until you sign out or close it.</p>
        {error && <p role="alert" class="error">{error}</p>}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  )
}

function Shell({ me, onSignOut }: { me: Me | null; onSignOut(): void }) {
  const { path } = useLocation()
  const found = findRoute(path)
  const projectId = found?.params.project
  // One read of the project names it in the header and the tab title.
  const project = useGet<Project>(projectId ? `/api/projects/${encodeURIComponent(projectId)}` : null)
  useDocumentTitle(path, projectId ? project.data?.name : undefined)
  return (
    <>
      <a href="#main" class="skip">
        Skip to content
      </a>
      <header class="top">
        <Link href="/" class="brand">
          Portal
        </Link>
        {projectId && <span class="project">{project.data?.name ?? (project.error ? 'unknown project' : '…')}</span>}
        <a href="/reference/" class="reference">
          API reference
        </a>
        <span class="who">
          {me ? (
            <>
              {me.name} · <span class={`role ${me.role}`}>{me.role}</span>
            </>
          ) : (
            '…'
          )}
        </span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      {projectId && <ProjectNav project={projectId} path={path} />}
      <KeyboardShortcuts />
      <main id="main" tabIndex={-1}>
        {found ? <found.page {...found.params} /> : <NotFound />}
      </main>
    </>
  )
}

function findRoute(path: string) {
  for (const [pattern, page] of ROUTES) {
    const params = match(pattern, path)
    if (params) return { page, params }
  }
  return null
}

function ProjectNav({ project, path }: { project: string; path: string }) {
  const modules = useModules(project)
  return (
    <nav class="sections" aria-label="Project sections">
      <Link href={`/p/${project}`} aria-current={path === `/p/${project}` || path === `/p/${project}/` ? 'page' : undefined}>
        Overview
      </Link>
      {navigationEntries(modules).map(({ path: section, label }) => {
        const href = `/p/${project}/${section}`
        const current = path === href || path.startsWith(`${href}/`)
        return (
          <Link href={href} aria-current={current ? 'page' : undefined}>
            {label}
          </Link>
        )
      })}
    </nav>
  )
}

function NotFound() {
  return (
    <section>
      <h1>Nothing here</h1>
      <p>
        This address is not a page of the portal. <button type="button" onClick={() => navigate('/')}>Go to projects</button>
      </p>
    </section>
  )
}
