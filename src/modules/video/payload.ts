import { Type } from 'typebox'
import { HttpUrl, Text } from '../fields.ts'

export const VideoPayload = Type.Object(
  {
    jobId: Text(),
    targetUrl: Type.Optional(HttpUrl('the page or stream recorded')),
    status: Type.Optional(Text('queued, recording, processing, done, failed — or your own')),
    artifactUrl: Type.Optional(HttpUrl('where the finished video is')),
  },
  { additionalProperties: true, examples: [{ jobId: 'job-1', targetUrl: 'https://example.com/', status: 'done', artifactUrl: 'https://cdn.example.com/v.mp4' }] },
)
