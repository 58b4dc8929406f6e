import { Type } from 'typebox'
import { HttpUrl, Text } from '../fields.ts'
import type { PayloadExamples } from '../module.ts'

export const VideoPayload = Type.Object(
  {
    jobId: Text(),
    targetUrl: Type.Optional(HttpUrl('the page or stream recorded')),
    status: Type.Optional(Text('queued, recording, processing, done, failed — or your own')),
    artifactUrl: Type.Optional(HttpUrl('where the finished video is')),
  },
  { additionalProperties: true, examples: [{ jobId: 'job-1', targetUrl: 'https://example.com/', status: 'done', artifactUrl: 'https://cdn.example.com/v.mp4' }] },
)

export const videoExamples: PayloadExamples<typeof VideoPayload> = {
  valid: { jobId: 'job-1', targetUrl: 'https://example.com/', status: 'done', artifactUrl: 'https://cdn.example.com/v.mp4' },
  invalid: { data: { jobId: 'job-1', targetUrl: 'ftp://example.com/' }, reason: 'data.targetUrl: must be an absolute http(s) URL' },
}
