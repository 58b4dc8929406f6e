import { Type } from 'typebox'
import { columnEquals, defineModule } from '../module.ts'
import { TracePayload, traceExamples } from './payload.ts'
import { traceMigrations } from './migrations.ts'
import { traceReads } from './reads.ts'
import { traceSignals } from './signals.ts'

export const tracesModule = defineModule({
  type: 'trace',
  name: 'traces',
  basePath: '/api/traces',
  payload: TracePayload,
  examples: traceExamples,
  table: 'trace_events',
  columnar: true,
  migrations: traceMigrations,
  columns: (d) => ({
    trace_id: d.traceId,
    span_id: d.spanId,
    parent_span_id: d.parentSpanId ?? null,
    service_name: d.serviceName ?? null,
    name: d.name ?? null,
    duration_ms: d.durationMs ?? null,
  }),
  filters: {
    trace_id: columnEquals('trace_id', Type.String()),
    service: columnEquals('service_name', Type.String()),
  },
  signals: traceSignals,
  routes: traceReads,
})
