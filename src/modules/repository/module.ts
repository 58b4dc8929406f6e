import { Type } from 'typebox'
import { columnEquals, defineModule } from '../module.ts'
import { RepositoryPayload, repositoryExamples } from './payload.ts'
import { repositoryMigrations } from './migrations.ts'
import { repositoryReads } from './reads.ts'

export const repositoryModule = defineModule({
  type: 'repository',
  name: 'repository',
  basePath: '/api/modules/repository',
  payload: RepositoryPayload,
  examples: repositoryExamples,
  table: 'repository_events',
  columnar: true,
  migrations: repositoryMigrations,
  columns: (d) => ({ repo: d.repo, branch: d.branch ?? null, author: d.author ?? null }),
  filters: {
    repo: columnEquals('repo', Type.String()),
    branch: columnEquals('branch', Type.String()),
    author: columnEquals('author', Type.String()),
  },
  summaries: {
    branches: { table: 'repository_branch_summary', columns: ['repo', 'branch'], hours: 'repository_branch_hours' },
    authors: { table: 'repository_author_summary', columns: ['author'], hours: 'repository_author_hours' },
  },
  retention: {
    expiring: ['repository_branch_hours', 'repository_author_hours'].map((table) => ({ table, timeColumn: 'hour', key: ['project_id', 'hour', 'group_key'] })),
  },
  routes: repositoryReads,
})
