import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { computeGrouping, computeGroupingV2, GROUPING_ALGORITHM, type ExceptionInput, type GroupingInput } from '../../src/errors/fingerprint.ts'
import { parseStackTrace, type Frame } from '../../src/errors/stack-trace.ts'

const PROJECT = 'prj_v3'

const frame = (fn: string | null, where: Partial<Frame> = {}): Frame => ({ function: fn, module: null, filename: null, lineno: 1, colno: null, inApp: true, ...where })
const input = (given: Partial<GroupingInput>): GroupingInput => ({ name: '', message: '', frames: [], ...given })
const fingerprint = (given: Partial<GroupingInput>) => computeGrouping(PROJECT, input(given)).fingerprint
const counted = (given: Partial<GroupingInput>) =>
  computeGrouping(PROJECT, input(given))
    .components.filter((component) => component.contributes)
    .map((component) => [component.id, component.values])
const sites = (frames: Frame[], platform?: string) => counted({ name: 'E', frames, platform }).find(([id]) => id === 'stacktrace')?.[1]

// Each rule v3 changed, on cases of our own; the rules it keeps from v2 are in grouping-rules.test.ts.
describe('grouping algorithm v3', () => {
  test('is the version new occurrences are grouped with', () => {
    assert.equal(GROUPING_ALGORITHM, 'v3')
    assert.equal(computeGrouping(PROJECT, input({ name: 'E' })).algorithm, 'v3')
  })

  describe('an exception group whose tree is broken counts whole', () => {
    const root: ExceptionInput = { type: 'ExceptionGroup', value: 'unhandled errors in a TaskGroup', frames: [], mechanism: { exceptionId: 0, isExceptionGroup: true } }
    const child = (type: string, value: string, exceptionId: number, parentId: number): ExceptionInput => ({ type, value, frames: [], mechanism: { exceptionId, parentId } })

    test('a child that is its own parent: its failure counts, so different failures stay apart (v2 kept the root alone, one group for all)', () => {
      const timeout = [child('TimeoutError', 'fetch timed out', 1, 1), root]
      const refused = [child('ConnectionRefusedError', 'connect refused', 1, 1), root]
      assert.notEqual(fingerprint({ chain: timeout }), fingerprint({ chain: refused }))
      assert.deepEqual(
        counted({ chain: timeout }).filter(([id]) => id === 'exception'),
        [['exception', ['TimeoutError']], ['exception', ['ExceptionGroup']]],
      )
      assert.equal(computeGroupingV2(PROJECT, input({ chain: timeout })).fingerprint, computeGroupingV2(PROJECT, input({ chain: refused })).fingerprint, 'v2 grouped them together')
    })

    test('an id given twice: every exception counts, in the order sent', () => {
      const twice = [child('KeyError', "'sku'", 1, 0), child('ValueError', 'bad quantity', 1, 0), root]
      assert.deepEqual(
        counted({ chain: twice }).filter(([id]) => id === 'exception'),
        [['exception', ['KeyError']], ['exception', ['ValueError']], ['exception', ['ExceptionGroup']]],
      )
    })

    test('a sound tree still counts by its top-level exceptions, and a root whose children hang in a cycle alone', () => {
      const sound = [child('TimeoutError', 'fetch 1 timed out', 2, 0), child('TimeoutError', 'fetch 2 timed out', 1, 0), root]
      assert.equal(fingerprint({ chain: sound }), fingerprint({ name: 'TimeoutError', message: 'fetch 9 timed out' }))
      const cycle = [child('KeyError', "'a'", 2, 1), child('ValueError', 'b', 1, 2), root]
      assert.deepEqual(counted({ chain: cycle }), [['exception', ['ExceptionGroup']], ['value', ['unhandled errors in a TaskGroup']]])
    })
  })

  describe('frames that never count, even when no frame is in-app', () => {
    const handler = frame('handleOrder', { filename: '/srv/app/src/orders.js' })
    for (const [what, noise] of [
      ['a Sentry Dart SDK frame', frame('SentryClient.captureEvent', { filename: 'sentry_client.dart', absPath: 'package:sentry/src/sentry_client.dart' })],
      ['a frame of another Sentry Dart package', frame('SentryHttpClient.send', { filename: 'http_client.dart', absPath: 'package:sentry_dio/src/http_client.dart' })],
      ['a Dart runtime frame', frame('_asyncThen', { filename: 'org-dartlang-sdk:///lib/async/zone.dart', absPath: 'org-dartlang-sdk:///lib/async/zone.dart' })],
      ['a Sentry Java SDK frame', frame('captureException', { module: 'io.sentry.Hub', filename: 'Hub.java' })],
      ['a Babel helper, by its module', frame('asyncGeneratorStep', { module: '@babel/runtime/helpers/asyncToGenerator', inApp: false })],
      ['core-js, by its path', frame('run', { filename: '/srv/app/node_modules/core-js/internals/task.js', inApp: false })],
      ['tslib', frame('step', { filename: '/srv/app/dist/tslib.es6.js' })],
      ['regenerator-runtime', frame('invoke', { filename: 'webpack:///./node_modules/regenerator-runtime/runtime.js', inApp: false })],
      ["Node's task queue", frame('process.processTicksAndRejections', { filename: 'node:internal/process/task_queues', inApp: false })],
      ['an APM agent wrapping the call', frame('wrappedHandler', { filename: '/srv/app/node_modules/newrelic/lib/shim/shim.js', inApp: false })],
    ] as const) {
      test(`${what}`, () => {
        assert.deepEqual(sites([handler, noise]), ['orders.js handleOrder'], 'beside an in-app frame')
        assert.equal(sites([noise]), undefined, 'alone, it does not make a stack that counts')
        assert.deepEqual(
          counted({ name: 'Error', message: 'bad', frames: [noise] }),
          [['exception', ['Error']], ['value', ['bad']]],
          'an error thrown through it alone groups by its message, not by the helper it passed through',
        )
      })
    }

    test('but the same names in the application itself count: a function called nextTick in the app, a file merely named like a library', () => {
      assert.deepEqual(sites([frame('Scheduler.nextTick', { filename: '/srv/app/src/scheduler.js' })]), ['scheduler.js nextTick'])
      assert.deepEqual(sites([frame('score', { filename: '/srv/app/src/score-js/index.js' })]), ['index.js score'])
      assert.deepEqual(sites([frame('capture', { module: 'com.acme.sentry.Reporter', filename: 'Reporter.java' })]), ['com.acme.sentry.Reporter capture'])
    })
  })

  describe('an event without exception type whose frames say nothing groups by its message', () => {
    const nothing = { name: '', message: '<unlabeled event>', isMessage: true }
    test('as Sentry’s one group for events with nothing to tell: no frames, only SDK frames, a lone URL frame without a function', () => {
      const bare = fingerprint({ ...nothing })
      assert.equal(fingerprint({ ...nothing, frames: [frame('SentryClient.captureEvent', { absPath: 'package:sentry/src/sentry_client.dart', filename: 'sentry_client.dart' })] }), bare)
      assert.equal(fingerprint({ ...nothing, frames: [frame(null, { filename: 'https://shop.example.com/app.js', absPath: 'https://shop.example.com/app.js' })] }), bare)
      assert.deepEqual(counted({ ...nothing, frames: [frame(null, { filename: 'https://shop.example.com/app.js' })] }), [['message', ['<unlabeled event>']]])
    })

    test('an event with a text keeps it apart from others; frames that do say something still group it', () => {
      const said = (message: string, frames: Frame[]) => fingerprint({ name: '', message, isMessage: true, frames })
      const sdkOnly = [frame('SentryClient.captureEvent', { absPath: 'package:sentry/src/sentry_client.dart', filename: 'sentry_client.dart' })]
      assert.equal(said('cache 7 cold', sdkOnly), said('cache 9 cold', []))
      assert.notEqual(said('cache 7 cold', sdkOnly), said('queue full', sdkOnly))
      assert.deepEqual(counted({ ...nothing, frames: [frame('tick', { filename: '/srv/app/queue.js' })] }), [['stacktrace', ['queue.js tick']]])
    })
  })

  describe('a JavaScript chunk that failed to load is one group', () => {
    const chunk = (message: string, fn: string, platform?: string) => ({ name: 'ChunkLoadError', message, platform, frames: [frame(fn, { filename: `/static/js/${fn}.js` })] })
    test('whichever chunk, from wherever it was imported', () => {
      assert.equal(fingerprint(chunk('Loading chunk 12 failed.', 'openCart', 'javascript')), fingerprint(chunk('Loading chunk 7 failed. (timeout: https://cdn.example.com/7.js)', 'openSettings', 'javascript')))
      assert.equal(fingerprint(chunk('Loading chunk 12 failed.', 'openCart')), fingerprint(chunk('Loading chunk 3 failed.', 'openProfile')), 'a printed JavaScript stack says the platform')
      assert.deepEqual(counted(chunk('Loading chunk 12 failed.', 'openCart', 'javascript')), [['exception', ['ChunkLoadError']]])
    })

    test('only in JavaScript, and a client’s fingerprint still adds its own parts', () => {
      assert.notEqual(fingerprint({ ...chunk('a', 'x', 'python'), frames: [frame('x', { module: 'app.a' })] }), fingerprint({ ...chunk('b', 'y', 'python'), frames: [frame('y', { module: 'app.b' })] }))
      const withTenant = (tenant: string) => fingerprint({ ...chunk('Loading chunk 1 failed.', 'openCart', 'javascript'), override: ['{{ default }}', tenant] })
      assert.notEqual(withTenant('acme'), withTenant('globex'))
    })
  })

  describe('names generated at every start lose what changes', () => {
    test('JVM: Guice and Hibernate proxies and Clojure functions', () => {
      const jvm = (module: string) => sites([frame('handle', { module, filename: 'Generated.java' })], 'java')![0]
      assert.equal(jvm('com.acme.OrderController$$EnhancerByGuice$$3f2a1b'), jvm('com.acme.OrderController$$EnhancerByGuice$$9c8d7e'))
      assert.equal(jvm('com.acme.OrderController$$EnhancerByGuice$$3f2a1b$$FastClassByGuice$$77aa01'), 'com.acme.OrderController$$EnhancerByGuice$$$$FastClassByGuice$$ handle')
      assert.equal(jvm('com.acme.model.Order$HibernateProxy$Xy12Zq'), 'com.acme.model.Order$HibernateProxy$ handle')
      assert.equal(jvm('shop.core$checkout$fn__4711'), jvm('shop.core$checkout$fn__12'))
    })

    test('a Javassist proxy’s file name, and an ERB template’s method', () => {
      assert.deepEqual(sites([frame('find', { filename: 'OrderResource_$$_javassist_seam_12.java' })], 'java'), ['orderresource_$$_javassist.java find'])
      assert.deepEqual(sites([frame('_app_views_orders_show_html_erb__1148290431264853041_70254812', { filename: 'show.html.erb' })], 'ruby'), ['show.html.erb _app_views_orders_show_html_erb'])
    })
  })

  test('printed stacks are read with the same rules: a Node stack whose only other frame is the task queue groups by its in-app frame', () => {
    const stack = 'TypeError: x\n    at loadUser (/srv/app/src/users.js:4:1)\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)'
    assert.deepEqual(sites(parseStackTrace(stack)), ['users.js loadUser'])
    const libraryOnly = 'Error: ECONNRESET\n    at TLSSocket.onread (node:net:1:1)\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)'
    assert.deepEqual(sites(parseStackTrace(libraryOnly)), ['node:net onread'])
  })
})
