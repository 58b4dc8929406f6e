import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { DIALECTS, startTestPortal, type TestPortal } from './support/portal.ts'

for (const dialect of DIALECTS) {
  describe(`health on ${dialect}`, () => {
    let t: TestPortal
    before(async () => {
      t = await startTestPortal(dialect)
    })
    after(() => t.close())

    test('answers ok without a token when the database and token store answer', async () => {
      const res = await t.request('GET', '/api/health')
      assert.equal(res.status, 200)
      assert.equal(res.body.status, 'ok')
      assert.equal(res.body.checks.database.status, 'ok')
      assert.equal(res.body.checks.authorization.status, 'ok')
    })
  })
}
