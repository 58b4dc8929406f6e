import { Type } from 'typebox'
import { RepoName, Text } from '../fields.ts'

export const RepositoryPayload = Type.Object(
  {
    provider: Type.Optional(Text('github, gitlab, bitbucket — or your own')),
    repo: RepoName(),
    branch: Type.Optional(Text()),
    commit: Type.Optional(Text('commit SHA')),
    author: Type.Optional(Text()),
  },
  { additionalProperties: true, examples: [{ provider: 'github', repo: 'acme/checkout-api', branch: 'main', commit: '9f2c1e7', author: 'carol' }] },
)
