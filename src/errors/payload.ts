import { Type } from 'typebox'
import { Text } from '../modules/fields.ts'
import type { PayloadExamples } from '../modules/module.ts'
import { Breadcrumbs } from './occurrence-context.ts'

/** A structured stack frame, as capture takes it and as the OTLP and Sentry receivers hand it on. */
export const ErrorFrame = Type.Object(
  {
    function: Type.Optional(Type.String({ maxLength: 1024 })),
    module: Type.Optional(Type.String({ maxLength: 1024, description: 'module or class; used for grouping before the file name' })),
    filename: Type.Optional(Type.String({ maxLength: 4096, description: 'path or URL; only its base name counts for grouping' })),
    absPath: Type.Optional(Type.String({ maxLength: 4096, description: 'the absolute path or URL beside a shorter `filename` (Sentry’s `abs_path`): a file served from a URL does not count for grouping, its function does' })),
    lineno: Type.Optional(Type.Integer({ minimum: 0 })),
    colno: Type.Optional(Type.Integer({ minimum: 0 })),
    inApp: Type.Optional(Type.Boolean({ description: 'marks the frame as your code or a library, overriding the rules' })),
  },
  { additionalProperties: false },
)

/** An `error` event from ingest: grouped like a capture, by its frames or stack when it has them, else by name and message. */
export const ErrorPayload = Type.Object(
  {
    name: Type.Optional(Text('exception name, e.g. TypeError')),
    message: Type.Optional(Text()),
    release: Type.Optional(Text()),
    environment: Type.Optional(Text()),
    service: Type.Optional(Text('the service that raised it')),
    stack: Type.Optional(Type.String({ maxLength: 262_144, description: 'a printed stack trace (V8, CPython, JVM, …), parsed for grouping' })),
    frames: Type.Optional(Type.Array(ErrorFrame, { maxItems: 1000, description: 'structured frames, innermost first; used instead of `stack` for grouping' })),
    request: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'request context; Authorization, Cookie and API-key headers are stored as [filtered]' })),
    fingerprint: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 512 }), {
        minItems: 1,
        maxItems: 32,
        description: 'overrides grouping, as a capture’s and Sentry’s `fingerprint`: occurrences with the same array share a group; `{{ default }}` stands for the computed fingerprint',
      }),
    ),
    breadcrumbs: Type.Optional(Breadcrumbs),
    tags: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'tags (text, number or boolean values), counted per group as facets' })),
    user: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'who it affected: `id`, `email` or `ip_address` counts towards the group’s users affected' })),
    reportedBy: Type.Optional(Type.String({ description: 'set by the Sentry (`sentry`) and OTLP (`opentelemetry`) receivers: one exception both report for the same trace and span is stored once' })),
  },
  { additionalProperties: true, examples: [{ name: 'TypeError', message: 'cart is undefined', environment: 'production', release: '1.2.3' }], description: 'At least one of name and message is required.' },
)

export const errorExamples: PayloadExamples<typeof ErrorPayload> = {
  valid: { name: 'TypeError', message: 'x is undefined', environment: 'production' },
  invalid: { data: { release: '1.0' }, reason: 'data.name: required when data.message is absent' },
}
