import { anyValue, asText, attributes, enumNumber, hexId, isoTime, nanosToMs, serviceNameOf, type AnyValue, type KeyValue, type Resource, type Scope } from './values.ts'
import { emptyTranslation, isMessage, listAt, requireMessage, translateItem, type Translation } from './translation.ts'
import { exceptionOfAttributes } from './traces.ts'

interface LogRecord {
  timeUnixNano?: unknown
  observedTimeUnixNano?: unknown
  severityNumber?: unknown
  severityText?: string | null
  body?: AnyValue | null
  attributes?: KeyValue[] | null
  traceId?: unknown
  spanId?: unknown
}

export interface ExportLogsServiceRequest {
  resourceLogs?: { resource?: Resource | null; scopeLogs?: { scope?: Scope | null; logRecords?: LogRecord[] | null }[] | null }[] | null
}

/** OTLP severity numbers in ranges of four (1–4 trace … 21–24 fatal), as the logs data model defines them. */
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal']
/** SEVERITY_NUMBER_UNSPECIFIED, SEVERITY_NUMBER_TRACE, …_TRACE2 … _FATAL4: the names OTLP/JSON may send instead of numbers */
const SEVERITY_NAMES = ['SEVERITY_NUMBER_UNSPECIFIED', ...LEVELS.flatMap((level) => ['', '2', '3', '4'].map((n) => `SEVERITY_NUMBER_${level.toUpperCase()}${n}`))]

export function levelOf(severityNumber: number, severityText: string | null | undefined): string | undefined {
  if (severityNumber >= 1 && severityNumber <= 24) return LEVELS[Math.floor((severityNumber - 1) / 4)]
  return severityText ? severityText.toLowerCase() : undefined
}

/** Log records become `log` events: severity → level, body → message, resource and attributes → fields. */
export function translateLogs(request: ExportLogsServiceRequest, receivedAt: number): Translation {
  const translation = emptyTranslation()
  for (const [r, resourceLogs] of listAt(request.resourceLogs, 'resourceLogs').entries()) {
    if (!isMessage(resourceLogs)) continue
    const resource = attributes(resourceLogs.resource?.attributes)
    const serviceName = serviceNameOf(resource)
    for (const [s, scopeLogs] of listAt(resourceLogs.scopeLogs, `resourceLogs[${r}].scopeLogs`).entries()) {
      if (!isMessage(scopeLogs)) continue
      const scope = scopeLogs.scope?.name || undefined
      for (const record of listAt(scopeLogs.logRecords, `resourceLogs[${r}].scopeLogs[${s}].logRecords`)) {
        translateItem(translation, (item) => {
          requireMessage(record, 'log record')
          const ms = nanosToMs(record.timeUnixNano) ?? nanosToMs(record.observedTimeUnixNano) ?? receivedAt
          const severityNumber = enumNumber(record.severityNumber, SEVERITY_NAMES)
          const data: Record<string, unknown> = { message: asText(anyValue(record.body)) }
          const level = levelOf(severityNumber, typeof record.severityText === 'string' ? record.severityText : undefined)
          if (level !== undefined) data.level = level
          if (typeof scope === 'string') data.module = scope
          const recordAttributes = attributes(record.attributes)
          // Record attributes win over resource attributes of the same name.
          data.fields = { ...resource, ...recordAttributes }
          const traceId = hexId(record.traceId)
          const spanId = hexId(record.spanId)
          if (traceId !== undefined) data.traceId = traceId
          if (spanId !== undefined) data.spanId = spanId
          if (serviceName !== undefined) data.serviceName = serviceName
          if (severityNumber > 0) data.severityNumber = severityNumber
          const ts = isoTime(ms)
          translation.events.push({ type: 'log', ts, data })
          translation.itemOf.push(item)
          // A log record with exception attributes (semantic conventions) is also an error occurrence, as an `exception` span event is.
          const exception = exceptionOfAttributes(recordAttributes, ts, { traceId, spanId, serviceName })
          if (exception) {
            translation.events.push(exception)
            translation.itemOf.push(-1)
          }
        })
      }
    }
  }
  return translation
}
