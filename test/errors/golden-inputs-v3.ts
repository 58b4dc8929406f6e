import type { GroupingInput } from '../../src/errors/fingerprint.ts'
import type { Frame } from '../../src/errors/stack-trace.ts'
import { GOLDEN_INPUTS_V2 } from './golden-inputs-v2.ts'

export const GOLDEN_PROJECT_V3 = 'prj_golden_v3'

const frame = (fn: string | null, where: Partial<Frame> = {}): Frame => ({ function: fn, module: null, filename: null, lineno: 1, colno: null, inApp: true, ...where })

/**
 * The inputs of v2's golden test and one of each rule v3 changed, whose v3 fingerprints
 * test/errors/fingerprint-golden-v3.test.ts pins. Never edit one; add another.
 */
export const GOLDEN_INPUTS_V3: Record<string, GroupingInput> = {
  ...GOLDEN_INPUTS_V2,
  'exception group with an id twice': {
    name: 'ExceptionGroup',
    message: 'errors',
    frames: [],
    chain: [
      { type: 'KeyError', value: "'sku'", frames: [], mechanism: { exceptionId: 1, parentId: 0 } },
      { type: 'ValueError', value: 'bad quantity', frames: [], mechanism: { exceptionId: 1, parentId: 0 } },
      { type: 'ExceptionGroup', value: 'errors', frames: [], mechanism: { exceptionId: 0, isExceptionGroup: true } },
    ],
  },
  'sdk and runtime frames only, no type or message': {
    name: '',
    message: '<unlabeled event>',
    isMessage: true,
    frames: [
      frame('SentryClient.captureEvent', { filename: 'sentry_client.dart', absPath: 'package:sentry/src/sentry_client.dart' }),
      frame('_asyncThen', { filename: 'org-dartlang-sdk:///lib/async/zone.dart', absPath: 'org-dartlang-sdk:///lib/async/zone.dart' }),
    ],
  },
  'error through polyfills and the task queue only': {
    name: 'Error',
    message: 'bad 17',
    platform: 'node',
    frames: [
      frame('asyncGeneratorStep', { module: '@babel/runtime/helpers/asyncToGenerator', inApp: false }),
      frame('process.processTicksAndRejections', { filename: 'node:internal/process/task_queues', inApp: false }),
    ],
  },
  'chunk that failed to load': { name: 'ChunkLoadError', message: 'Loading chunk 12 failed.', platform: 'javascript', frames: [frame('openCart', { filename: '/static/js/cart.js' })] },
  'generated jvm names and templates': {
    name: 'java.lang.IllegalStateException',
    message: 'closed',
    platform: 'java',
    frames: [
      frame('handle', { module: 'com.acme.OrderController$$EnhancerByGuice$$3f2a1b', filename: 'OrderController.java' }),
      frame('total', { module: 'com.acme.model.Order$HibernateProxy$Xy12Zq', filename: 'Order.java' }),
      frame('invoke', { module: 'shop.core$checkout$fn__4711', filename: 'core.clj' }),
      frame('find', { filename: 'OrderResource_$$_javassist_seam_12.java' }),
      frame('_app_views_orders_show_html_erb__1148290431264853041_70254812', { filename: 'show.html.erb' }),
    ],
  },
}
