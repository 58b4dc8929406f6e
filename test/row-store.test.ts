// The suites that write and read log events, run again with the SQLite portals keeping them as rows of the
// SQLite database (EVENT_STORE=sqlite, what a data folder from before the DuckDB event store keeps:
// docs/event-store.md): a file of its own so that npm test runs it beside the others. The environment is set
// before the suites are imported, since they read it as they load.
process.env.EVENT_STORE = 'sqlite'
process.env.TEST_DATABASES = 'sqlite' // PostgreSQL has one store, which the suites run on already

await import('../src/modules/logs/logs.test.ts')
await import('./retention.test.ts')
await import('./signal-links.test.ts')
await import('./ingest.test.ts')
await import('./intake/otlp.test.ts')
await import('./project-activity.test.ts')
