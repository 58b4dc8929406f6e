import { opentelemetry } from './otlp-proto.generated.js'

/**
 * The OTLP export messages, decoded with the official definitions: the opentelemetry-proto files in
 * ./opentelemetry-proto (vendored, version and licence beside them) compiled by protobufjs's CLI into
 * ./otlp-proto.generated.js (bin/generate-otlp-proto.ts).
 */
interface MessageType {
  decode(bytes: Uint8Array): unknown
  encode(message: unknown): { finish(): Uint8Array }
}

const collector = opentelemetry.proto.collector

/** The request and response messages of one OTLP signal's export service. */
export interface OtlpService {
  request: MessageType
  response: MessageType
}

export const traceService: OtlpService = { request: collector.trace.v1.ExportTraceServiceRequest, response: collector.trace.v1.ExportTraceServiceResponse }
export const logsService: OtlpService = { request: collector.logs.v1.ExportLogsServiceRequest, response: collector.logs.v1.ExportLogsServiceResponse }
export const metricsService: OtlpService = { request: collector.metrics.v1.ExportMetricsServiceRequest, response: collector.metrics.v1.ExportMetricsServiceResponse }
