// `npm run bench`: every benchmark, in order. `npm run bench -- ingest` runs the named ones only.
const BENCHMARKS: Record<string, () => Promise<unknown>> = {
  ingest: () => import('./ingest.ts').then((m) => m.run()),
  otlp: () => import('./otlp.ts').then((m) => m.run()),
  sdk: () => import('./sdk.ts').then((m) => m.run()),
  webhooks: () => import('./webhooks.ts').then((m) => m.run()),
  errors: () => import('./errors.ts').then((m) => m.run()),
  reads: () => import('./reads.ts').then((m) => m.run()),
  ui: () => import('./ui.ts').then((m) => m.run()),
  eventstore: () => import('./eventstore.ts').then((m) => m.run()),
  'eventstore-portal': () => import('./eventstore-portal.ts').then((m) => m.run()),
  layout: () => import('./layout.ts').then((m) => m.run()),
  pgstore: () => import('./pgstore.ts').then((m) => m.run()),
  retention: () => import('./retention.ts').then((m) => m.run()),
  instances: () => import('./instances.ts').then((m) => m.run()),
  'instances-webhooks': () => import('./instances-webhooks.ts').then((m) => m.run()),
  'query-apis': () => import('./query-apis.ts').then((m) => m.run()),
  alerts: () => import('./alerts.ts').then((m) => m.run()),
  'health-under-load': () => import('./health-under-load.ts').then((m) => m.run()),
  libraries: () => import('./libraries.ts').then((m) => m.run()),
}

const wanted = process.argv.slice(2)
for (const [name, run] of Object.entries(BENCHMARKS)) {
  if (wanted.length && !wanted.includes(name)) continue
  console.log(`\n=== ${name} ===`)
  await run()
}
process.exit(0)
