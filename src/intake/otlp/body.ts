import { parseJsonBody } from '../../http/json-body.ts'
import { ProblemError } from '../../http/problem.ts'
import type { OtlpService } from './proto.ts'

export type OtlpEncoding = 'protobuf' | 'json'

/** OTLP/HTTP's two encodings, by Content-Type; anything else is a 415, as the specification says. */
export function encodingOf(contentType: string | undefined): OtlpEncoding {
  const mediaType = contentType?.split(';')[0].trim().toLowerCase()
  if (mediaType === 'application/x-protobuf') return 'protobuf'
  if (mediaType === 'application/json') return 'json'
  throw new ProblemError(415, 'unsupported_media_type', 'Content-Type: must be application/x-protobuf or application/json (OTLP/HTTP)')
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
