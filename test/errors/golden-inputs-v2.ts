import type { ExceptionInput, GroupingInput } from '../../src/errors/fingerprint.ts'
import { parseStackTrace, type Frame } from '../../src/errors/stack-trace.ts'
import { GOLDEN_INPUTS } from './golden-inputs.ts'

export const GOLDEN_PROJECT_V2 = 'prj_golden_v2'

const frame = (fn: string | null, where: Partial<Frame> = {}): Frame => ({ function: fn, module: null, filename: null, lineno: 1, colno: null, inApp: true, ...where })

const nodeStack = `TypeError: Cannot read properties of undefined (reading 'total')
    at Object.checkout [as run] (/srv/app/src/cart.ts:42:17)
    at async Promise.all (index 0)
    at new Order (/srv/app/src/order.ts:9:3)
    at Layer.handle [as handle_request] (/srv/app/node_modules/express/lib/router/layer.js:95:5)
    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)`

const libraryOnlyStack = `Error: connect ECONNREFUSED 127.0.0.1:5432
    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)
    at Client._connect (/srv/app/node_modules/pg/lib/client.js:132:11)`

const browserStack = `TypeError: x is undefined
aha@https://shop.example.com/static/main.3f9a2b1c.js:1:200
test/<@https://shop.example.com/static/main.3f9a2b1c.js:1:300
@https://shop.example.com/static/vendor.js:2:10`

const pythonStack = `Traceback (most recent call last):
  File "/srv/app/orders/views.py", line 12, in create_order
    total = compute(items)
  File "/srv/app/orders/pricing.py", line 40, in compute
    return sum(prices) / count
  File "/usr/lib/python3.12/statistics.py", line 300, in mean
    raise StatisticsError('mean requires at least one data point')
ZeroDivisionError: division by zero`

const jvmStack = `org.springframework.dao.DataAccessException: boom
	at com.acme.Repo$$EnhancerBySpringCGLIB$$5f1e2d.find(Repo.java:10)
	at com.acme.Service.lambda$load$3(Service.java:22)
	at com.acme.Service$2.run(Service.java:30)
	at sun.reflect.GeneratedMethodAccessor412.invoke(Unknown Source)
	at java.base/java.lang.Thread.run(Thread.java:833)`

const aggregate = (inner: ExceptionInput[]): ExceptionInput[] => [
  ...inner.map((exception, index) => ({ ...exception, mechanism: { exceptionId: index + 1, parentId: 0 } })).reverse(),
  { type: 'System.AggregateException', value: 'One or more errors occurred.', frames: [], mechanism: { exceptionId: 0, isExceptionGroup: true } },
]
const declined = (card: number): ExceptionInput => ({ type: 'Shop.PaymentDeclined', value: `card ${card} declined`, frames: [frame('Charge', { module: 'Shop.Payments' })] })
const outOfStock: ExceptionInput = { type: 'Shop.OutOfStock', value: 'sku 7 out of stock', frames: [] }

/**
 * Inputs of every kind grouping v2 reads, whose v2 fingerprints test/errors/fingerprint-golden-v2.test.ts
 * pins: groups v2 opened keep them, however its code is made faster. Never edit one; add another.
 */
export const GOLDEN_INPUTS_V2: Record<string, GroupingInput> = {
  ...GOLDEN_INPUTS,
  'node stack with aliases, async and new': { name: 'TypeError', message: "Cannot read properties of undefined (reading 'total')", frames: parseStackTrace(nodeStack) },
  'node library frames only': { name: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:5432', frames: parseStackTrace(libraryOnlyStack) },
  'browser stack from URLs': { name: 'TypeError', message: 'x is undefined', frames: parseStackTrace(browserStack), platform: 'javascript' },
  'python traceback, standard library last': { name: 'ZeroDivisionError', message: 'division by zero', frames: parseStackTrace(pythonStack), platform: 'python' },
  'jvm generated classes and lambdas': { name: 'org.springframework.dao.DataAccessException', message: 'boom', frames: parseStackTrace(jvmStack), platform: 'java' },
  'structured javascript frames, names to normalise': {
    name: 'Error',
    message: 'bad',
    platform: 'javascript',
    frames: [
      frame('Object.aha', { filename: '/srv/app/a.js', absPath: 'webpack:///./src/a.js' }),
      frame('Foo.prototype.testMethod', { filename: '/srv/app/a.js' }),
      frame('<anonymous>', { filename: '/srv/app/b.js' }),
      frame('eval', { filename: '/srv/app/b.js' }),
      frame('map', { filename: '[native code]' }),
      frame('step', { module: 'tslib/tslib.es6', filename: '/srv/app/dist/tslib.js' }),
      frame('render', { module: 'app/components/list', filename: './app/components/list.jsx' }),
    ],
  },
  'recursion counts once': { name: 'RangeError', message: 'Maximum call stack size exceeded', frames: [frame('walk', { filename: '/srv/app/tree.js', lineno: 3 }), frame('walk', { filename: '/srv/app/tree.js', lineno: 3 }), frame('main', { filename: '/srv/app/index.js' })] },
  'system frames only, structured': {
    name: 'Error',
    message: 'bad',
    frames: [frame('query', { filename: '/srv/app/node_modules/pg/lib/client.js', inApp: false }), frame('FuncJob.Run', { module: 'github.com/robfig/cron/v3', filename: '/go/pkg/mod/github.com/robfig/cron/v3@v3.0.0/cron.go' })],
  },
  'windows paths and content hashes': { name: 'Error', message: 'bad', frames: [frame('load', { filename: 'C:\\app\\src\\Users.3f9a2b1c4d.ts' }), frame('main', { filename: 'runtime~main.0a1b2c3d4e5f6a7b.js?v=2' })] },
  'chain of three': {
    name: 'OrderFailed',
    message: 'order 17 failed',
    frames: [],
    chain: [
      { type: 'IOException', value: 'disk full at /var/data', frames: [frame('write', { module: 'app.storage', filename: 'storage.py' })] },
      { type: 'DbError', value: 'insert failed', frames: [frame('insert', { module: 'app.db', filename: 'db.py', inApp: false })] },
      { type: 'OrderFailed', value: 'order 17 failed', frames: [] },
    ],
  },
  'aggregate of one kind': { name: 'System.AggregateException', message: 'One or more errors occurred.', frames: [], chain: aggregate([declined(4), declined(9)]) },
  'aggregate of two kinds': { name: 'System.AggregateException', message: 'One or more errors occurred.', frames: [], chain: aggregate([declined(4), outOfStock]) },
  'exception group with a self-parented child': {
    name: 'ExceptionGroup',
    message: 'errors',
    frames: [],
    chain: [
      { type: 'ValueError', value: 'nope', frames: [], mechanism: { exceptionId: 1, parentId: 1 } },
      { type: 'ExceptionGroup', value: 'errors', frames: [], mechanism: { exceptionId: 0, isExceptionGroup: true } },
    ],
  },
  'exception group without a root': {
    name: 'ValueError',
    message: 'nope',
    frames: [],
    chain: [
      { type: 'KeyError', value: "'a'", frames: [], mechanism: { exceptionId: 3, parentId: 2 } },
      { type: 'ValueError', value: 'nope', frames: [], mechanism: { exceptionId: 2, parentId: 1 } },
    ],
  },
  'synthetic type': { name: 'Error', message: 'Object captured as exception with keys: code, reason', frames: [], mechanism: { synthetic: true } },
  'message event with a template': { name: '', message: 'queue mail is 120 s behind', messageTemplate: 'queue %s is %d s behind', isMessage: true, frames: [frame('tick', { filename: '/srv/app/queue.js' })] },
  'message event without a template': { name: '', message: 'disk 91% full on 10.0.0.3', isMessage: true, frames: [] },
  'bare stack without type or message': { name: '', message: '<unlabeled event>', isMessage: true, frames: [frame('tick', { filename: '/srv/app/queue.js' })] },
  'event with nothing': { name: '', message: '<unlabeled event>', isMessage: true, frames: [] },
  'empty message under a type': { name: 'Error', message: '', frames: [] },
  'fingerprint variables': {
    name: 'PaymentError',
    message: 'card declined',
    frames: [frame('charge', { module: 'shop.payments', filename: 'payments.py' })],
    level: 'warning',
    transaction: '/checkout',
    tags: { tenant: 'acme' },
    override: ['{{ default }}', '{{ type }}', '{{ message }}', '{{ function }}', '{{ module }}', '{{ transaction }}', '{{ level }}', '{{ tags.tenant }}', '{{ tags.missing }}', '{{ unknown }}'],
  },
}
