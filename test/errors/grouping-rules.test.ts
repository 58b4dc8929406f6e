import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { computeGrouping, computeGroupingV2, type ExceptionInput, type GroupingInput } from '../../src/errors/fingerprint.ts'
import { computeGroupingV1 } from '../../src/errors/fingerprint-v1.ts'
import { parseStackTrace, type Frame } from '../../src/errors/stack-trace.ts'

const PROJECT = 'prj_rules'

const frame = (fn: string | null, where: Partial<Frame> = {}): Frame => ({ function: fn, module: null, filename: null, lineno: 1, colno: null, inApp: true, ...where })
const fingerprint = (input: Partial<GroupingInput>) => computeGrouping(PROJECT, { name: '', message: '', frames: [], ...input }).fingerprint
const counted = (input: Partial<GroupingInput>) =>
  computeGrouping(PROJECT, { name: '', message: '', frames: [], ...input })
    .components.filter((component) => component.contributes)
    .map((component) => [component.id, component.values])

/** A .NET-style aggregate: the root group (id 0) holding `inner` exceptions as its children. */
function aggregate(inner: ExceptionInput[]): ExceptionInput[] {
  const children = inner.map((exception, index) => ({ ...exception, mechanism: { exceptionId: index + 1, parentId: 0 } }))
  return [...children.reverse(), { type: 'System.AggregateException', value: 'One or more errors occurred.', frames: [], mechanism: { exceptionId: 0, isExceptionGroup: true } }]
}

const payment = (value: string): ExceptionInput => ({ type: 'Shop.PaymentDeclined', value, frames: [] })
const stock = (value: string): ExceptionInput => ({ type: 'Shop.OutOfStock', value, frames: [] })

// The rules grouping v2 brought and the current version (v3) keeps; what v3 changed is in grouping-v3.test.ts.
describe('grouping rules', () => {
  describe('exception chains and exception groups', () => {
    test('every exception of a chain counts: the same outer error with other causes is another group', () => {
      const outer: ExceptionInput = { type: 'CheckoutFailed', value: 'checkout failed', frames: [frame('checkout', { filename: '/srv/app/cart.js' })] }
      const byCard = [{ type: 'TypeError', value: 'card is undefined', frames: [frame('readCard', { filename: '/srv/app/card.js' })] }, outer]
      const byStock = [{ type: 'RangeError', value: 'no stock', frames: [frame('reserve', { filename: '/srv/app/stock.js' })] }, outer]
      assert.notEqual(fingerprint({ name: 'CheckoutFailed', chain: byCard }), fingerprint({ name: 'CheckoutFailed', chain: byStock }))
      assert.deepEqual(
        counted({ chain: byCard }).map(([id]) => id),
        ['exception', 'stacktrace', 'exception', 'stacktrace'],
      )
    })

    test('aggregates of different failures are different groups; of one failure (values differing in numbers only), one group with the failure thrown alone', () => {
      const declined = fingerprint({ chain: aggregate([payment('card 4 declined'), payment('card 9 declined')]) })
      assert.equal(declined, fingerprint({ chain: aggregate([payment('card 1 declined')]) }))
      assert.equal(declined, fingerprint({ name: 'Shop.PaymentDeclined', message: 'card 7 declined' }), 'the same failure outside an aggregate')
      const mixed = fingerprint({ chain: aggregate([payment('card 4 declined'), stock('sku 7')]) })
      assert.notEqual(mixed, declined)
      assert.equal(mixed, fingerprint({ chain: aggregate([stock('sku 1'), payment('card 2 declined')]) }), 'the order of the children does not matter')
      assert.deepEqual(
        counted({ chain: aggregate([payment('card 4 declined'), stock('sku 7')]) }).filter(([id]) => id === 'exception'),
        [['exception', ['Shop.PaymentDeclined']], ['exception', ['Shop.OutOfStock']], ['exception', ['System.AggregateException']]],
        'one of each kind of failure, then the root',
      )
    })

    test('nested groups count by the first exceptions that are not groups; a tree broken by a child that is its own parent counts whole', () => {
      const nested: ExceptionInput[] = [
        { ...payment('card 3 declined'), mechanism: { exceptionId: 2, parentId: 1 } },
        { type: 'System.AggregateException', value: 'inner', frames: [], mechanism: { exceptionId: 1, parentId: 0, isExceptionGroup: true } },
        { type: 'System.AggregateException', value: 'outer', frames: [], mechanism: { exceptionId: 0, isExceptionGroup: true } },
      ]
      assert.equal(fingerprint({ chain: nested }), fingerprint({ name: 'Shop.PaymentDeclined', message: 'card 5 declined' }))
      const selfParent: ExceptionInput[] = [
        { ...payment('x'), mechanism: { exceptionId: 1, parentId: 1 } },
        { type: 'System.AggregateException', value: 'One or more errors occurred.', frames: [], mechanism: { exceptionId: 0, isExceptionGroup: true } },
      ]
      assert.deepEqual(counted({ chain: selfParent }), [
        ['exception', ['Shop.PaymentDeclined']],
        ['value', ['x']],
        ['exception', ['System.AggregateException']],
        ['value', ['One or more errors occurred.']],
      ])
    })

    test('the main exception keeps the path of its first children: a cause under it counts', () => {
      const withCause: ExceptionInput[] = [
        { type: 'IOException', value: 'disk full', frames: [], mechanism: { exceptionId: 2, parentId: 1 } },
        { ...payment('card 1 declined'), mechanism: { exceptionId: 1, parentId: 0 } },
        { type: 'ExceptionGroup', value: 'errors', frames: [], mechanism: { exceptionId: 0, isExceptionGroup: true } },
      ]
      assert.deepEqual(counted({ chain: withCause }).filter(([id]) => id === 'exception'), [['exception', ['Shop.PaymentDeclined']], ['exception', ['IOException']]])
    })

    test('a type the SDK made up (mechanism.synthetic) does not count', () => {
      assert.equal(
        fingerprint({ name: 'Error', message: 'Object captured as exception with keys: a', mechanism: { synthetic: true } }),
        fingerprint({ name: 'Other', message: 'Object captured as exception with keys: a', mechanism: { synthetic: true } }),
      )
    })
  })

  describe('without an in-app frame', () => {
    const generic = { name: 'Error', message: 'bad' }
    test('the system frames group it, not a generic message: unrelated errors saying "bad" stay apart', () => {
      const db = [frame('query', { filename: '/srv/app/node_modules/pg/lib/client.js', inApp: false }), frame('connect', { filename: '/srv/app/node_modules/pg/lib/pool.js', inApp: false })]
      const http = [frame('request', { filename: '/srv/app/node_modules/undici/lib/fetch.js', inApp: false })]
      assert.notEqual(fingerprint({ ...generic, frames: db }), fingerprint({ ...generic, frames: http }))
      assert.deepEqual(counted({ ...generic, frames: db }), [['exception', ['Error']], ['stacktrace', ['client.js query', 'pool.js connect']]])
    })

    test('the message only as the last resort, its numbers, ids, quoted values and addresses stripped', () => {
      const a = fingerprint({ name: 'DbError', message: "connect to 10.0.0.7:5432 failed for 'orders' after 31 ms, request 7f3a9c2e-1b4d-4e5f-8a6b-9c0d1e2f3a4b" })
      const b = fingerprint({ name: 'DbError', message: "connect to 10.0.0.9:5433 failed for 'users' after 5 ms, request 0b1c2d3e-4f5a-4b6c-8d7e-8f9a0b1c2d3e" })
      assert.equal(a, b)
      assert.notEqual(a, fingerprint({ name: 'DbError', message: 'pool exhausted' }))
      assert.deepEqual(counted({ name: 'DbError', message: 'line one 1\nline two 2\nline three 3' }), [['exception', ['DbError']], ['value', ['line one <num> line two <num>']]])
    })

    test('in-app frames win over system frames, and then the system frames do not count', () => {
      const mine = frame('loadUser', { filename: '/srv/app/src/users.js' })
      const lib = (fn: string) => frame(fn, { filename: '/srv/app/node_modules/express/lib/router.js', inApp: false })
      assert.equal(fingerprint({ name: 'TypeError', frames: [mine, lib('handle')] }), fingerprint({ name: 'TypeError', frames: [mine, lib('dispatch')] }))
    })
  })

  describe('which frames are in-app', () => {
    const inAppSites = (frames: Frame[]) => counted({ name: 'E', frames }).find(([id]) => id === 'stacktrace')?.[1]
    const app = frame('handler', { filename: '/srv/app/src/handler.js' })
    for (const [what, vendored] of [
      ['@babel/runtime in a bundle', frame('asyncGeneratorStep', { filename: 'webpack:///./@babel/runtime/helpers/asyncToGenerator.js' })],
      ['core-js by its module', frame('listener', { module: 'core-js/internals/task' })],
      ['tslib', frame('step', { filename: '/srv/app/dist/tslib.es6.js' })],
      ['regenerator-runtime', frame('invoke', { filename: 'https://cdn.example.com/regenerator-runtime/runtime.js' })],
      ['the Go module cache', frame('FuncJob.Run', { module: 'github.com/robfig/cron/v3', filename: '/go/pkg/mod/github.com/robfig/cron/v3@v3.0.0/cron.go' })],
      ['site-packages', frame('get', { filename: '/venv/lib/python3.12/site-packages/django/db/models/query.py' })],
      ['node_modules (even marked in-app by the SDK)', frame('handle', { filename: '/srv/app/node_modules/express/lib/router/layer.js' })],
      ['vendor (PHP, Ruby)', frame('run', { filename: '/srv/app/vendor/laravel/framework/src/Pipeline.php' })],
    ] as const) {
      test(`${what} is not in-app, whatever the SDK says`, () => {
        assert.deepEqual(inAppSites([vendored, app]), ['handler.js handler'])
      })
    }
  })

  describe('function and file names', () => {
    const sites = (frames: Frame[], platform?: string) => counted({ name: 'E', frames, platform }).find(([id]) => id === 'stacktrace')?.[1]
    test('JavaScript: the object of a method is dropped (Object.aha, Foo.prototype.aha → aha), as browsers differ in it', () => {
      const file = { filename: '/srv/app/a.js' }
      assert.deepEqual(sites([frame('Object.aha', file), frame('Foo.prototype.testMethod', file), frame('async Promise.all', file)], 'javascript'), ['a.js aha', 'a.js testMethod', 'a.js all'])
      assert.equal(fingerprint({ name: 'E', platform: 'javascript', frames: [frame('Object.aha', file)] }), fingerprint({ name: 'E', platform: 'javascript', frames: [frame('aha', file)] }))
    })

    test('JavaScript: anonymous functions and eval count as no function; native and eval frames not at all', () => {
      const file = { filename: '/srv/app/a.js' }
      for (const anonymous of ['<anonymous>', 'Anonymous function', 'test/<', '?', 'Object.<anonymous>']) assert.deepEqual(sites([frame(anonymous, file)], 'javascript'), ['a.js ?'], anonymous)
      assert.deepEqual(sites([frame('map', { filename: '[native code]' }), frame('eval', file), frame('run', file)], 'javascript'), ['a.js run'])
    })

    test('a file served from a URL counts by its function only: a deploy moves its path', () => {
      const at = (url: string) => frame('render', { filename: url.split('/').pop()!, absPath: url })
      assert.equal(fingerprint({ name: 'E', frames: [at('https://cdn.example.com/v1/app.js')] }), fingerprint({ name: 'E', frames: [at('https://cdn.example.com/v2/main.js')] }))
    })

    test('a frame repeating the one before it exactly (recursion) counts once', () => {
      const walk = frame('walk', { filename: '/srv/app/tree.js', lineno: 9 })
      assert.deepEqual(sites([walk, walk, walk, frame('main', { filename: '/srv/app/index.js' })]), ['tree.js walk', 'index.js main'])
    })

    test('JVM: lambdas count as no function and generated class names lose their numbers', () => {
      const jvm = (module: string, fn: string) => frame(fn, { module, filename: 'Service.java' })
      assert.deepEqual(
        sites([jvm('com.acme.Service$$EnhancerBySpringCGLIB$$1a2b3c', 'run'), jvm('com.acme.Service$1', 'call'), jvm('com.acme.Main', 'lambda$main$0')], 'java'),
        ['com.acme.Service$$CGLIB run', 'com.acme.Service$ call', 'com.acme.Main ?'],
      )
    })

    test('printed stacks (the portal’s own captures) are read with the same rules', () => {
      const stack = 'TypeError: x\n    at Object.loadUser (/srv/app/src/users.js:4:1)\n    at Layer.handle (/srv/app/node_modules/express/lib/router/layer.js:95:5)'
      assert.deepEqual(sites(parseStackTrace(stack)), ['users.js loadUser'])
    })
  })

  describe('message events (no exception)', () => {
    test('group by the template when the SDK sends one, else by the message with its variable parts stripped', () => {
      const template = 'order %s failed'
      assert.equal(
        fingerprint({ isMessage: true, message: 'order 17 failed', messageTemplate: template }),
        fingerprint({ isMessage: true, message: 'order ab-9 failed', messageTemplate: template }),
      )
      assert.equal(fingerprint({ isMessage: true, message: 'order 17 failed' }), fingerprint({ isMessage: true, message: 'order 18 failed' }))
      assert.deepEqual(counted({ isMessage: true, message: 'queue long' }), [['message', ['queue long']]])
    })

    test('a message with a stack (attachStacktrace) still groups by its template, wherever it is sent from; the stack is shown', () => {
      const at = (fn: string) => [frame(fn, { filename: '/srv/app/queue.js' })]
      const message = (text: string, frames: Frame[]) => ({ isMessage: true, message: text, messageTemplate: text, frames })
      assert.equal(fingerprint(message('queue 1 long', at('tick'))), fingerprint(message('queue 2 long', at('drain'))))
      assert.notEqual(fingerprint(message('queue 1 long', at('tick'))), fingerprint(message('disk full', at('tick'))))
      const shown = computeGrouping(PROJECT, { name: '', ...message('queue 1 long', at('tick')) }).components.find((component) => component.id === 'stacktrace')
      assert.deepEqual([shown?.contributes, shown?.values], [false, ['queue.js tick']])
    })

    test('an event with neither type nor template (a bare stack) groups by its frames', () => {
      const frames = [frame('tick', { filename: '/srv/app/queue.js' })]
      assert.equal(fingerprint({ isMessage: true, message: '<unlabeled event>', frames }), fingerprint({ isMessage: true, message: 'other', frames }))
    })
  })

  describe('fingerprint variables, as Sentry documents them', () => {
    const event: Partial<GroupingInput> = {
      name: 'PaymentError',
      message: 'card declined',
      frames: [frame('charge', { module: 'shop.payments', filename: 'payments.py', inApp: true }), frame('run', { module: 'celery.app', filename: 'app.py', inApp: false })],
      level: 'warning',
      transaction: '/checkout',
      tags: { tenant: 'acme', shard: 3 },
    }
    const resolved = (parts: string[], input: Partial<GroupingInput> = event) =>
      computeGrouping(PROJECT, { name: '', message: '', frames: [], ...input, override: parts }).components.find((component) => component.id === 'custom')!.values

    test('each variable stands for the event’s value', () => {
      assert.deepEqual(
        resolved(['{{ type }}', '{{ error.type }}', '{{ error.value }}', '{{ message }}', '{{ function }}', '{{ module }}', '{{ transaction }}', '{{ level }}', '{{ tags.tenant }}', '{{tags.shard}}', 'literal']),
        ['PaymentError', 'PaymentError', 'card declined', 'card declined', 'charge', 'shop.payments', '/checkout', 'warning', 'acme', '3', 'literal'],
      )
    })

    test('a value the event lacks is named as missing, as Sentry does', () => {
      assert.deepEqual(resolved(['{{ transaction }}', '{{ tags.region }}', '{{ function }}', '{{ error.type }}'], { isMessage: true, message: 'hello' }), [
        '<no-transaction>',
        '<no-value-for-tag-region>',
        '<no-function>',
        '<no-type>',
      ])
      assert.deepEqual(resolved(['{{ message }}'], { isMessage: true, message: 'hello' }), ['hello'])
    })

    test('{{ default }} stands for the computed fingerprint, and the variables split groups', () => {
      const byTenant = (tenant: string) => fingerprint({ ...event, tags: { tenant }, override: ['{{ default }}', '{{ tags.tenant }}'] })
      assert.notEqual(byTenant('acme'), byTenant('globex'))
      assert.equal(byTenant('acme'), byTenant('acme'))
      assert.equal(fingerprint({ ...event, override: ['{{ default }}'] }), fingerprint(event))
    })
  })

  test('keeps the v2 and v1 fingerprints computable, newest first, for groups they opened', () => {
    const input: GroupingInput = { name: 'TypeError', message: 'x', frames: [frame('load', { filename: '/srv/app/a.js' })] }
    const grouping = computeGrouping(PROJECT, input)
    assert.deepEqual(grouping.earlier?.(), [
      { fingerprint: computeGroupingV2(PROJECT, input).fingerprint, algorithm: 'v2' },
      { fingerprint: computeGroupingV1(PROJECT, input).fingerprint, algorithm: 'v1' },
    ])
    assert.notEqual(grouping.fingerprint, computeGroupingV2(PROJECT, input).fingerprint)
  })
})
