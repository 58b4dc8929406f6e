// The suites that write and read log events, run again with the SQLite portals on the opt-in DuckDB event
// store (EVENT_STORE=duckdb, docs/event-store.md): a file of its own so that npm test runs it beside the
// others. The environment is set before the suites are imported, since they read it as they load.
process.env.EVENT_STORE = 'duckdb'
process.env.TEST_DATABASES = 'sqlite' // DuckDB holds events beside SQLite only

await import('../src/modules/logs/logs.test.ts')
await import('./retention.test.ts')
await import('./signal-links.test.ts')
await import('./ingest.test.ts')
await import('./intake/otlp.test.ts')
