import { promisify } from 'node:util'
import { gunzip } from 'node:zlib'
import { ProblemError } from '../http/problem.ts'
import { batchTooLarge } from '../ingest/route.ts'

const gunzipAsync = promisify(gunzip)

/** The request body, gunzipped when it says so; the decompressed size has the same bound as the sent one. */
export async function decodedBody(body: Buffer, contentEncoding: string | undefined, maxBytes: number): Promise<Buffer> {
  const encoding = contentEncoding?.trim().toLowerCase()
  if (encoding === undefined || encoding === '' || encoding === 'identity') return body
  if (encoding !== 'gzip') throw new ProblemError(415, 'unsupported_content_encoding', 'Content-Encoding: must be gzip or identity')
  try {
    return await gunzipAsync(body, { maxOutputLength: maxBytes })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) throw batchTooLarge(maxBytes)
    throw new ProblemError(400, 'invalid_gzip', `body: Content-Encoding is gzip but the body does not decompress (${(error as Error).message})`)
  }
}

