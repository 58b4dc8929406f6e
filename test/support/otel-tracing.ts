import { context, propagation, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core'
import type { TracerProvider } from '@opentelemetry/sdk-trace'

/**
 * What a Node.js service's tracing set-up registers (OpenTelemetry JS 3 dropped NodeTracerProvider's
 * `register()` for this): active spans follow async calls, W3C trace context and baggage propagate.
 * Undo with `trace.disable()`, `context.disable()` and `propagation.disable()`.
 */
export function registerNodeTracing(provider: TracerProvider): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }))
  trace.setGlobalTracerProvider(provider)
}
