import { Type } from 'typebox'
import { RepoName, Text } from '../fields.ts'
import type { PayloadExamples } from '../module.ts'

export const RepositoryPayload = Type.Object(
  {
    provider: Type.Optional(Text('github, gitlab, bitbucket — or your own')),
    repo: RepoName(),
    branch: Type.Optional(Text()),
    commit: Type.Optional(Text('commit SHA')),
    author: Type.Optional(Text()),
    message: Type.Optional(Text('the commit message’s first line')),
    files: Type.Optional(Type.Array(Text(), { description: 'paths the commit touched, from the repository root: suspect commits rank those that touched an error’s in-app files first' })),
  },
  { additionalProperties: true, examples: [{ provider: 'github', repo: 'acme/checkout-api', branch: 'main', commit: '9f2c1e7', author: 'carol' }] },
)

export const repositoryExamples: PayloadExamples<typeof RepositoryPayload> = {
  valid: { provider: 'github', repo: 'acme/api', branch: 'main', commit: 'abc123', author: 'carol' },
  invalid: { data: { repo: 'not-a-repo' }, reason: 'data.repo: must be in owner/name form' },
}
