import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { computeGroupingV2 as computeGrouping } from '../../src/errors/fingerprint.ts'
import type { Frame } from '../../src/errors/stack-trace.ts'
import { GOLDEN_INPUTS_V2, GOLDEN_PROJECT_V2 } from './golden-inputs-v2.ts'

// Pinned output of grouping algorithm v2, computed before its code was made faster. If one of these
// moves, the groups v2 opened split: make the change a new algorithm version instead.
const GOLDEN_FINGERPRINTS_V2: Record<string, string> = {
  'v8 stack': '157f5292644557520815e7e167f3919f940031cc4ebb551fde77b7e5d97dd524',
  'python traceback': 'e572246c3c6f3c10b2c1e06ea7a832099ef6b45dca2c4679c165ae1346e47f0a',
  'jvm stack': '159f9b50689ece4060d6b6a380d6a994a36007219f8bfeee47fb9d8c55693b82',
  'message only': 'ebdcff5e36c377434718b4aee09f6804243b7d29796afc314d660ae917645499',
  'library frames only': '3d0ebd7ef204b2fe85bf2a705edbf656d2ea11d4a6c02925f034e3bb9b5f7a05',
  'structured frames marked in-app': 'b79755ca545ffdbb6232c09395cdf8e5c8a02481c366aa7fcabb99510115f843',
  'override with default': 'dbc6283da8d6a5e902dc9a7b18b2ea7d47a3c3ab7068fee6a6a410ca4f12991a',
  'override alone': 'c3620f2e1880b560690b507a3337ada5cecb2ebaf7b74209bfda715296a097a9',
  'node stack with aliases, async and new': '3910cabbcb3bb57f7f5e71c91a320a9c336ef84ea80d95b9b8400496669f1168',
  'node library frames only': 'd03206c84ce24f212094fb870fba7c004faaef4b3454295624ea1ede724071ab',
  'browser stack from URLs': 'a9488320d86209cb028def2f564e63a8e5d4da4600a9aa509809409b36bc9760',
  'python traceback, standard library last': '863fb3009d773e5e3bb5ee7e50ed2001f5a358356f790b79d2cfd6cd1305e9bd',
  'jvm generated classes and lambdas': 'ba324abd1f026f3be48eca1f9c6b9041143349ade1fcf025365b3d536f48b450',
  'structured javascript frames, names to normalise': 'bd9d5987d18ac2e923d020394f29ba0c747ff9261c9071ba313138072f2cb526',
  'recursion counts once': '4c52e6072e04214b331e81aa1bdbe089853f640a660bbb9ffddaae7de338502e',
  'system frames only, structured': '087610765ee5af379ee5775367a00a5625cecf4e8b9c6fad6b097e98798630e5',
  'windows paths and content hashes': 'ff68a134cf1176e92107e315c4851998d8efa2a7e0e3c97b58be7888038935b7',
  'chain of three': 'fb001b4f37134c58564cb952677af14669a3917630d55a79247b8311d012fafc',
  'aggregate of one kind': 'fdb84d481dd33af72e26b4a24cd70630f7984d9e7021dbc48b418b467a81419d',
  'aggregate of two kinds': '000e694899cc3069de26b2c307ee54dfa8a6bac01edf22385455ba3692bb3156',
  'exception group with a self-parented child': '0580efb1c1c2ac2144c5eb961086d53f80056089a23f4396fe4ce7c72e403f13',
  'exception group without a root': 'ea34af5a2702a2aff8b5339bb91881bf296e052eb49b4dfb340bfeb203fd2fcd',
  'synthetic type': 'c85fc0b6807a797ecc960b57f0ca509c43f71fa64c768e489a5583edd919f2bc',
  'message event with a template': '2cf798cf81c71bab076c63566ac9623464748d132739d4cc161bef678d45993b',
  'message event without a template': '792f3b39466610125d047ace975f53fc836c364bd3457bb55ca064a6848c6f87',
  'bare stack without type or message': 'eb373c67b093071aa0944ac77e987948a872ad84e82f2eb7f1e4361b9e462f72',
  'event with nothing': 'f8ab25510d587cf9928f955fc7952915696047c9ac7dd1758520cc4dcf0cabc3',
  'empty message under a type': '2550248a8d0a469254b36b434cab2e8966ce9cf9a12acbf6364dc265395b6036',
  'fingerprint variables': '95d4a40899a97c5352c4b468a32cb52ba2bb2b42249061f6ef3f34cff86dd34c',
}

describe('fingerprint algorithm v2 (golden)', () => {
  test('every golden input keeps its pinned fingerprint', () => {
    assert.deepEqual(Object.keys(GOLDEN_INPUTS_V2).sort(), Object.keys(GOLDEN_FINGERPRINTS_V2).sort())
    for (const [name, input] of Object.entries(GOLDEN_INPUTS_V2)) {
      assert.equal(computeGrouping(GOLDEN_PROJECT_V2, input).fingerprint, GOLDEN_FINGERPRINTS_V2[name], name)
    }
  })

  test('the same input computed again, from what was remembered of its frames, keeps its fingerprint', () => {
    for (const [name, input] of Object.entries(GOLDEN_INPUTS_V2)) {
      assert.equal(computeGrouping(GOLDEN_PROJECT_V2, input).fingerprint, GOLDEN_FINGERPRINTS_V2[name], name)
    }
  })

  test('frames whose strings differ only in where one ends and the next begins are not taken for each other', () => {
    const frame = (where: Partial<Frame>): Frame => ({ function: 'render', module: null, filename: null, lineno: 1, colno: null, inApp: true, ...where })
    const sites = (f: Frame) => computeGrouping(GOLDEN_PROJECT_V2, { name: 'E', message: '', frames: [f] }).components.find((c) => c.id === 'stacktrace')!.values
    // One frame's path and file, written as another frame's single file: only the first comes from a URL.
    assert.deepEqual(sites(frame({ absPath: 'https://cdn.example.com/a.js', filename: '/srv/a.js' })), [' render'])
    assert.deepEqual(sites(frame({ filename: 'https://cdn.example.com/a.js\u0000/srv/a.js' })), [' render'])
    assert.deepEqual(sites(frame({ filename: '/srv/a.js\u0000https://cdn.example.com/a.js' })), ['a.js render'])
    assert.deepEqual(sites(frame({ function: 'render\u0000app.views', filename: '/srv/b.js' })), ['b.js views'])
    assert.deepEqual(sites(frame({ module: 'app.views', filename: '/srv/b.js' })), ['app.views render'])
  })
})
