import { Type } from 'typebox'
import { ProblemError } from './problem.ts'

/** Most buckets one histogram read answers: enough for a minute per bucket over a day's quarter, cheap to draw. */
export const MAX_BUCKETS = 1000

/** The query of a bucketed count over time: a closed window and the bucket size. */
export const HistogramQuery = (what: string) => ({
  from: Type.String({ format: 'date-time', description: `${what} at or after (ISO 8601)` }),
  to: Type.String({ format: 'date-time', description: `${what} before (ISO 8601)` }),
  bucket_seconds: Type.Integer({ minimum: 60, maximum: 2_592_000, description: `bucket size in seconds (60 to 30 days); at most ${MAX_BUCKETS} buckets over the window` }),
})

/** The window and bucket of a histogram read, in epoch ms; a 400 naming the parameter when they do not fit. */
export function histogramBuckets(query: { from: string; to: string; bucket_seconds: number }): { fromMs: number; toMs: number; bucketMs: number } {
  const fromMs = Date.parse(query.from)
  const toMs = Date.parse(query.to)
  const bucketMs = query.bucket_seconds * 1000
  if (toMs <= fromMs) throw new ProblemError(400, 'invalid_request', 'query.to: must be after query.from')
  const buckets = Math.ceil(toMs / bucketMs) - Math.floor(fromMs / bucketMs)
  if (buckets > MAX_BUCKETS) throw new ProblemError(400, 'invalid_request', `query.bucket_seconds: ${buckets} buckets over the window; at most ${MAX_BUCKETS}, take a larger bucket`)
  return { fromMs, toMs, bucketMs }
}
