import { createRequire } from 'node:module'

/**
 * The official OTLP protobuf definitions (opentelemetry-proto), as the OpenTelemetry JS project
 * generated them into protobufjs static code for @opentelemetry/otlp-transformer 0.57. Later
 * releases serialise by hand and ship no decoder, so the receiver pins this one for its root.
 */
const root = createRequire(import.meta.url)('@opentelemetry/otlp-transformer/build/src/generated/root.js')

interface MessageType {
  decode(bytes: Uint8Array): unknown
  encode(message: unknown): { finish(): Uint8Array }
}

const collector = root.opentelemetry.proto.collector

/** The request and response messages of one OTLP signal's export service. */
export interface OtlpService {
  request: MessageType
  response: MessageType
}

export const traceService: OtlpService = { request: collector.trace.v1.ExportTraceServiceRequest, response: collector.trace.v1.ExportTraceServiceResponse }
export const logsService: OtlpService = { request: collector.logs.v1.ExportLogsServiceRequest, response: collector.logs.v1.ExportLogsServiceResponse }
export const metricsService: OtlpService = { request: collector.metrics.v1.ExportMetricsServiceRequest, response: collector.metrics.v1.ExportMetricsServiceResponse }
