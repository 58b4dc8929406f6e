import { Type } from 'typebox'
import type { FastifyReply } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { PortalContext } from '../../context.ts'
import { ProblemError, problemErrorHandler, problemResponses } from '../../http/problem.ts'
import type { ApiKeyPrincipal, IngestPipeline } from '../../ingest/pipeline.ts'
import { RATE_HEADERS } from '../../ingest/rate-limit.ts'
import { batchTooLarge, refuseDeclaredOversize } from '../../ingest/route.ts'
import { decodedBody } from '../compressed-body.ts'
import { decodeRequest, encodeResponse, encodingOf } from './body.ts'
import { translateLogs } from './logs.ts'
import { translateMetrics } from './metrics.ts'
import { logsService, metricsService, traceService, type OtlpService } from './proto.ts'
import { translateTraces } from './traces.ts'
import type { Translation } from './translation.ts'

/** Rejection reasons named in `partialSuccess.errorMessage`; the count covers them all. */
const REASONS_NAMED = 5
const EMPTY_BODY = Buffer.alloc(0)

interface Signal {
  path: string
  operationId: string
  summary: string
  service: OtlpService
  messageName: string
  /** the partialSuccess field counting rejected items, and what an item is called */
  rejectedField: 'rejectedSpans' | 'rejectedLogRecords' | 'rejectedDataPoints'
  item: string
  /** a real OTLP/JSON request of this signal, for the document's example */
  example: object
  /** reads the decoded message as its signal's request type, unchecked: a body of another shape fails in it (see translateBody) */
  translate(message: unknown, receivedAt: number): Translation
}

const EXAMPLE_RESOURCE = { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }] }
const EXAMPLE_TRACE = { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174' }
const EXAMPLE_START_NANOS = '1732390000000000000'

const SIGNALS: Signal[] = [
  {
    path: '/api/otlp/v1/traces',
    operationId: 'otlpExportTraces',
    summary: 'OTLP/HTTP traces: spans become `trace` events; `exception` span events become error occurrences',
    service: traceService,
    messageName: 'ExportTraceServiceRequest',
    rejectedField: 'rejectedSpans',
    item: 'span',
    example: {
      resourceSpans: [
        {
          resource: EXAMPLE_RESOURCE,
          scopeSpans: [
            {
              scope: { name: 'checkout-http' },
              spans: [
                {
                  ...EXAMPLE_TRACE,
                  name: 'GET /cart',
                  kind: 2,
                  startTimeUnixNano: EXAMPLE_START_NANOS,
                  endTimeUnixNano: '1732390000120000000',
                  attributes: [{ key: 'http.response.status_code', value: { intValue: '200' } }],
                  status: {},
                },
              ],
            },
          ],
        },
      ],
    },
    translate: translateTraces,
  },
  {
    path: '/api/otlp/v1/logs',
    operationId: 'otlpExportLogs',
    summary: 'OTLP/HTTP logs: log records become `log` events',
    service: logsService,
    messageName: 'ExportLogsServiceRequest',
    rejectedField: 'rejectedLogRecords',
    item: 'log record',
    example: {
      resourceLogs: [
        {
          resource: EXAMPLE_RESOURCE,
          scopeLogs: [
            {
              scope: { name: 'checkout' },
              logRecords: [{ ...EXAMPLE_TRACE, timeUnixNano: EXAMPLE_START_NANOS, severityNumber: 9, severityText: 'INFO', body: { stringValue: 'cart checked out' } }],
            },
          ],
        },
      ],
    },
    translate: translateLogs,
  },
  {
    path: '/api/otlp/v1/metrics',
    operationId: 'otlpExportMetrics',
    summary: 'OTLP/HTTP metrics: data points become `performance` events',
    service: metricsService,
    messageName: 'ExportMetricsServiceRequest',
    rejectedField: 'rejectedDataPoints',
    item: 'data point',
    example: {
      resourceMetrics: [
        {
          resource: EXAMPLE_RESOURCE,
          scopeMetrics: [
            {
              scope: { name: 'checkout' },
              metrics: [{ name: 'http.server.request.duration', unit: 'ms', gauge: { dataPoints: [{ timeUnixNano: EXAMPLE_START_NANOS, asDouble: 120.5 }] } }],
            },
          ],
        },
      ],
    },
    translate: translateMetrics,
  },
]

const PartialSuccess = (field: string) =>
  Type.Object(
    {
      partialSuccess: Type.Optional(
        Type.Object({
          [field]: Type.Integer({ description: 'items refused; the others were stored' }),
          errorMessage: Type.String({ description: 'the first problems, each naming the item and the field' }),
        }),
      ),
    },
    { description: 'OTLP Export…ServiceResponse; empty when every item was stored' },
  )

/**
 * OTLP/HTTP receivers (protobuf and JSON, gzip or not) in front of the ingest pipeline: the same
 * rate limits, validation and commit-before-answer as `POST /api/ingest`. A key needs the `otlp` scope.
 */
export const otlpRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext; pipeline: IngestPipeline }> = async (app, { ctx, pipeline }) => {
  const maxBatchBytes = ctx.config.ingest.maxBatchBytes
  const handleError = problemErrorHandler(ctx.storage.isUnavailable)

  // Bodies are read as bytes: they may be protobuf, and may be gzipped.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBatchBytes }, (_request, body, done) => done(null, body))

  for (const signal of SIGNALS) {
    app.post(
      signal.path,
      {
        config: { access: 'apiKey', keyScope: 'otlp' },
        bodyLimit: maxBatchBytes,
        validatorCompiler: () => () => true,
        onRequest: async (request) => refuseDeclaredOversize(request, maxBatchBytes),
        errorHandler: (error, request, reply) => {
          const oversize = error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          return handleError.call(app, oversize ? batchTooLarge(maxBatchBytes) : error, request, reply)
        },
        schema: {
          tags: ['ingest'],
          operationId: signal.operationId,
          summary: signal.summary,
          description:
            `Set OTEL_EXPORTER_OTLP_ENDPOINT to {base}/api/otlp and OTEL_EXPORTER_OTLP_HEADERS to authorization=Bearer <key>; the key needs the \`otlp\` scope (403 otherwise). ` +
            'Bodies: application/x-protobuf (the official opentelemetry-proto definitions) or application/json (OTLP/JSON), optionally Content-Encoding: gzip; ' +
            `at most INGEST_RATE_LIMIT_MAX_BATCH_BYTES sent and decompressed (413). Every ${signal.item} counts as one event against the project’s ingest limits (429 with Retry-After). ` +
            `200 means the stored ${signal.item}s are committed; refused ones are counted in \`partialSuccess.${signal.rejectedField}\` with the first reasons. ` +
            'The answer is in the request’s encoding. Field mapping: docs/intake.md.',
          security: [{ apiKey: [] }],
          // Documentation only: any media type is read as bytes (see the parser above) and decoded by its Content-Type.
          consumes: ['application/x-protobuf', 'application/json'],
          body: Type.String({ description: `a ${signal.messageName}, protobuf or OTLP/JSON (the example is the OTLP/JSON form)`, examples: [JSON.stringify(signal.example)] }),
          response: {
            200: {
              description: `Stored; refused ${signal.item}s are counted in partialSuccess.`,
              headers: RATE_HEADERS,
              content: {
                'application/x-protobuf': { schema: Type.String({ description: `a protobuf ${signal.messageName.replace('Request', 'Response')}` }) },
                'application/json': { schema: PartialSuccess(signal.rejectedField) },
              },
            },
            ...problemResponses(400, 'invalid_otlp', 'invalid_protobuf', 'invalid_gzip', 401, 403, 413, 'batch_too_large', 415, 'unsupported_content_encoding', 429, 503),
          },
        },
      },
      // An untyped reply: the answer goes out encoded here (protobuf or JSON); the schema's 200 documents both.
      async (request, reply: FastifyReply) => {
        pipeline.refuseWhenBacklogged()
        const principal = request.principal as ApiKeyPrincipal
        const encoding = encodingOf(request.headers['content-type'])
        const bytes = await decodedBody(Buffer.isBuffer(request.body) ? request.body : EMPTY_BODY, request.headers['content-encoding'], maxBatchBytes)
        const message = decodeRequest(bytes, encoding, signal.service, signal.messageName)
        const receivedAt = Date.now()
        const translation = translateBody(signal, message, encoding, receivedAt)
        await pipeline.admit(principal, reply, translation.events.length)
        const { accepted, rejected } = await pipeline.check(principal.projectId, translation.events, receivedAt)
        if (accepted.length > 0) {
          await pipeline.commit({ projectId: principal.projectId, key: undefined, response: { statusCode: 200, body: '' }, accepted })
        }
        const partialSuccess = partialSuccessOf(signal, translation, rejected)
        const body = encodeResponse(encoding, signal.service, partialSuccess)
        return reply.code(200).type(encoding === 'json' ? 'application/json' : 'application/x-protobuf').send(body)
      },
    )
  }
}

/**
 * OTLP/JSON is parsed as plain JSON (its ids are hex, not protobuf's base64) and read field by field,
 * so a body of the wrong shape (`{"resourceSpans":1}`) fails there: that is the client's 400, not a 500.
 * A protobuf body was shaped by its decoder already.
 */
function translateBody(signal: Signal, message: unknown, encoding: string, receivedAt: number): Translation {
  if (encoding !== 'json') return signal.translate(message, receivedAt)
  try {
    return signal.translate(message, receivedAt)
  } catch (error) {
    throw new ProblemError(400, 'invalid_otlp', `body: not an OTLP/JSON ${signal.messageName}: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/**
 * What was not stored, as the OTLP specification's ExportPartialSuccess: the items the translation or
 * the pipeline refused, counted once each, and the first reasons; undefined when all were stored. An
 * event derived from an item (an exception span event) refused alone is named in the message only:
 * its item was stored.
 */
function partialSuccessOf(signal: Pick<Signal, 'rejectedField' | 'item'>, translation: Translation, rejected: { index: number; reason: string }[]) {
  const reasons = [
    ...translation.refused.map(({ item, reason }) => ({ item, reason })),
    ...rejected.map((rejection) => ({ item: translation.itemOf[rejection.index], reason: rejection.reason })),
  ].sort((a, b) => (a.item === -1 ? 1 : b.item === -1 ? -1 : a.item - b.item))
  if (reasons.length === 0) return undefined
  const refusedItems = new Set(reasons.filter(({ item }) => item !== -1).map(({ item }) => item))
  return {
    [signal.rejectedField]: refusedItems.size,
    errorMessage: reasons
      .slice(0, REASONS_NAMED)
      .map(({ item, reason }) => (item === -1 ? `the exception event of a ${signal.item} (stored without it): ${reason}` : `${signal.item} ${item}: ${reason}`))
      .join('; '),
  }
}
