import { context, propagation, SpanStatusCode, trace } from '@opentelemetry/api'
import { logs, SeverityNumber } from '@opentelemetry/api-logs'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto'
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs'
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'
import * as Sentry from '@sentry/node'
import { registerNodeTracing } from '../support/otel-tracing.ts'
import { createProject, event, ingest, type TestPortal, type TestProject } from '../support/portal.ts'

/** What the checkout service sent, as a reviewer would find it in the UI. */
export interface CheckoutIncident {
  project: TestProject
  release: string
  deployCommit: string
  traceId: string
  failedSpanId: string
  failedLogMessage: string
}

const SERVICE = 'checkout'

/**
 * A checkout service instrumented as its developers would: OpenTelemetry's Node tracer provider and
 * logger provider exporting over OTLP to the endpoint and key the portal gives, Sentry's Node SDK with
 * the DSN it gives and `openTelemetryIntegration` (so an error carries the active OpenTelemetry span),
 * and its deploy pipeline reporting the release through the signed ingest. One request fails: its
 * trace, its logs and its error share a trace id, and its release is the deploy's.
 */
export async function seedCheckoutIncident(t: TestPortal, name: string, release: string): Promise<CheckoutIncident> {
  const project = await createProject(t, name)
  const created = await t.request('POST', `/api/projects/${project.id}/keys`, { token: t.adminToken, body: { name: SERVICE, scopes: ['otlp', 'sentry'] } })
  if (created.status !== 201) throw new Error(`key create: ${created.status} ${created.text}`)
  const { key, otlpEndpoint, sentryDsn } = created.body as { key: string; otlpEndpoint: string; sentryDsn: string }

  const deployCommit = 'e4d1c0ffee'
  const deployed = await ingest(t, project, [event('deploy', { service: SERVICE, version: '2.0.0', release, environment: 'production', status: 'succeeded', commit: deployCommit }, new Date(Date.now() - 20 * 60_000).toISOString())])
  if (deployed.status !== 200 || deployed.body.rejected.length > 0) throw new Error(`deploy ingest: ${deployed.status} ${deployed.text}`)

  const headers = { authorization: `Bearer ${key}` }
  const resource = resourceFromAttributes({ 'service.name': SERVICE, 'service.version': release })
  const tracerProvider = new TracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${otlpEndpoint}/v1/traces`, headers }) })] })
  registerNodeTracing(tracerProvider)
  const loggerProvider = new LoggerProvider({ resource, processors: [new SimpleLogRecordProcessor({ exporter: new OTLPLogExporter({ url: `${otlpEndpoint}/v1/logs`, headers }) })] })
  logs.setGlobalLoggerProvider(loggerProvider)
  // No default integrations: they would hook this test process's uncaught exceptions and console.
  Sentry.init({ dsn: sentryDsn, release, environment: 'production', defaultIntegrations: false, integrations: [Sentry.openTelemetryIntegration()] })

  const tracer = trace.getTracer(SERVICE)
  const logger = logs.getLogger(SERVICE)
  const failedLogMessage = 'card declined by acme-pay'
  const ids = tracer.startActiveSpan('POST /checkout', (request) => {
    logger.emit({ severityNumber: SeverityNumber.INFO, severityText: 'INFO', body: 'checkout started', attributes: { cartItems: 3 } })
    const failedSpanId = tracer.startActiveSpan('charge card', (charge) => {
      try {
        chargeCard('order-17')
      } catch (error) {
        logger.emit({ severityNumber: SeverityNumber.ERROR, severityText: 'ERROR', body: failedLogMessage, attributes: { orderId: 'order-17' } })
        Sentry.captureException(error)
        charge.setStatus({ code: SpanStatusCode.ERROR, message: 'declined' })
      }
      charge.end()
      return charge.spanContext().spanId
    })
    request.end()
    return { traceId: request.spanContext().traceId, failedSpanId }
  })

  await tracerProvider.forceFlush()
  await loggerProvider.forceFlush()
  if (!(await Sentry.flush(5000))) throw new Error('Sentry did not flush')
  await Promise.all([tracerProvider.shutdown(), loggerProvider.shutdown(), Sentry.close(2000)])
  // The globals go with the providers, so another project can be seeded in the same process.
  for (const api of [trace, logs, context, propagation]) api.disable()
  return { project, release, deployCommit, failedLogMessage, ...ids }
}

function chargeCard(orderId: string): never {
  throw new TypeError(`card of ${orderId} declined`)
}
