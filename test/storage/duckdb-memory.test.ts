import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DuckDBInstance } from '@duckdb/node-api'
import { describeDuckdbFailure, duckdbFailure, isOutOfMemory } from '../../src/storage/duckdb/duckdb-failures.ts'

// A query DuckDB refuses memory (past its `memory_limit`) is that query's 503 `overloaded`: never an outage,
// which would send ingest into the outbox and reads to 503s until a reopen, nor a 500.
test('a query DuckDB refuses memory is told apart from an outage', async () => {
  const instance = await DuckDBInstance.create(':memory:', { memory_limit: '2MiB', threads: '1' })
  try {
    const connection = await instance.connect()
    const refused = await connection.run('select count(distinct x::varchar) from range(3000000) t(x)').then(
      () => assert.fail('the query fitted in 2 MiB'),
      (error: unknown) => error,
    )
    connection.closeSync()
    assert.equal(isOutOfMemory(refused), true, String(refused))
    assert.equal(duckdbFailure(refused), undefined)
    assert.match(describeDuckdbFailure(refused), /^Out of Memory Error/)
    assert.equal(isOutOfMemory(new Error('IO Error: Could not write file "x": No space left on device')), false)
  } finally {
    instance.closeSync()
  }
})
