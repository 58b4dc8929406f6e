import { promisify } from 'node:util'
import { gunzip } from 'node:zlib'
import { parseJsonBody } from '../../http/json-body.ts'
import { ProblemError } from '../../http/problem.ts'
import { batchTooLarge } from '../../ingest/route.ts'
import type { OtlpService } from './proto.ts'

const gunzipAsync = promisify(gunzip)

export type OtlpEncoding = 'protobuf' | 'json'

/** OTLP/HTTP's two encodings, by Content-Type; anything else is a 415, as the specification says. */
export function encodingOf(contentType: string | undefined): OtlpEncoding {
  const mediaType = contentType?.split(';')[0].trim().toLowerCase()
  if (mediaType === 'application/x-protobuf') return 'protobuf'
  if (mediaType === 'application/json') return 'json'
  throw new ProblemError(415, 'unsupported_media_type', 'Content-Type: must be application/x-protobuf or application/json (OTLP/HTTP)')
}

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

/** The export request: protobuf through the official definitions, JSON as OTLP/JSON. A body that is neither is a 400. */
export function decodeRequest(bytes: Buffer, encoding: OtlpEncoding, service: OtlpService, messageName: string): unknown {
  if (encoding === 'json') {
    const parsed = parseJsonBody(bytes.toString('utf8'), 64)
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ProblemError(400, 'invalid_otlp', `body: must be an OTLP/JSON ${messageName} object`)
    return parsed
  }
  try {
    return service.request.decode(bytes)
  } catch (error) {
    throw new ProblemError(400, 'invalid_protobuf', `body: is not a protobuf ${messageName} (${(error as Error).message})`)
  }
}

/** The export response in the request's encoding: empty when everything was taken, else with `partialSuccess`. */
export function encodeResponse(encoding: OtlpEncoding, service: OtlpService, partialSuccess: Record<string, unknown> | undefined): Buffer | string {
  const message = partialSuccess ? { partialSuccess } : {}
  if (encoding === 'json') return JSON.stringify(message)
  return Buffer.from(service.response.encode(message).finish())
}
