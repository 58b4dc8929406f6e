import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { computeGroupingV1 as computeGrouping, fileBasename, GROUPING_ALGORITHM_V1 as GROUPING_ALGORITHM } from '../../src/errors/fingerprint-v1.ts'
import { GOLDEN_INPUTS, GOLDEN_PROJECT } from './golden-inputs.ts'

// Pinned output of grouping algorithm v1. If one of these moves, groups of every install split:
// make the change a new algorithm version instead of editing these values.
const GOLDEN_FINGERPRINTS: Record<string, string> = {
  'v8 stack': '40c897a0bf7f9ef04f975035a8cab322bc75b4a2205b4bcf3905238b816ec5e1',
  'python traceback': '4c5e9186845d57fd32ccfa077da3ecc2b67609891d13d7d3ab0576a9c6478213',
  'jvm stack': '24a44b7e558370e9a581b35952b696a004bf3284b20610e1f0526fb9defc048f',
  'message only': '9883e9756f08e08b72389b2812de80f928d67626a5dcb7b559d008a4ec1b7d50',
  'library frames only': '24a29e3498ade73fbd70a975f4a63b749b44797dca77c936d55aa103c6789ca4',
  'structured frames marked in-app': '92c472ddf62f6544364abc8720ae5d33b4c4d88efe6b64e4238a7d19ce9d3076',
  'override with default': 'fbb08ef72fd3d57111d945a918e9d413bce728ad82c0f71e1d62ab09b9f976f3',
  'override alone': 'f0698b243f4fbcd765b72b5a442d4ce4e78e1dde6fd3bdb20e5ae523e4c50ee8',
}

function hashed(name: string) {
  return computeGrouping(GOLDEN_PROJECT, GOLDEN_INPUTS[name]).components.filter((c) => c.contributes).map((c) => [c.id, c.values])
}

describe('fingerprint algorithm v1 (golden)', () => {
  test('is version v1, which groups opened before v2 keep', () => {
    assert.equal(GROUPING_ALGORITHM, 'v1')
  })

  test('every golden input keeps its pinned fingerprint', () => {
    assert.deepEqual(Object.keys(GOLDEN_INPUTS).sort(), Object.keys(GOLDEN_FINGERPRINTS).sort())
    for (const [name, input] of Object.entries(GOLDEN_INPUTS)) {
      assert.equal(computeGrouping(GOLDEN_PROJECT, input).fingerprint, GOLDEN_FINGERPRINTS[name], name)
    }
  })

  test('a V8 stack hashes its in-app file base names and functions, not lines, paths or library frames', () => {
    assert.deepEqual(hashed('v8 stack'), [['exception', ['TypeError']], ['stacktrace', ['users.ts loadUser', 'routes.ts handle']]])
  })

  test('a Python traceback is read most recent call last, site-packages left out', () => {
    assert.deepEqual(hashed('python traceback'), [['exception', ['ValueError']], ['stacktrace', ['views.py load_user']]])
  })

  test('a JVM stack hashes classes, with anonymous class and lambda numbers removed and the JDK left out', () => {
    assert.deepEqual(hashed('jvm stack'), [
      ['exception', ['java.lang.IllegalStateException']],
      ['stacktrace', ['com.acme.users.UserService load', 'com.acme.users.UserService$ run', 'com.acme.Main lambda$main']],
    ])
  })

  test('without a stack the message counts, its variable parts replaced', () => {
    assert.deepEqual(hashed('message only'), [
      ['exception', ['DbError']],
      ['message', ['query <uuid> for <email> timed out after <duration> on <ip> at <datetime>']],
    ])
  })

  test('a stack with no in-app frame falls back to the message', () => {
    assert.deepEqual(hashed('library frames only'), [['exception', ['Error']], ['message', ['connect ECONNREFUSED <ip>']]])
  })

  test('{{ default }} in an override stands for the computed fingerprint', () => {
    const custom = computeGrouping(GOLDEN_PROJECT, GOLDEN_INPUTS['override with default']).components.find((c) => c.id === 'custom')
    assert.deepEqual(custom?.values, [GOLDEN_FINGERPRINTS['v8 stack'], 'tenant-a'])
  })

  test('an override of only {{ default }} is the computed fingerprint', () => {
    const input = { ...GOLDEN_INPUTS['v8 stack'], override: ['{{default}}'] }
    assert.equal(computeGrouping(GOLDEN_PROJECT, input).fingerprint, GOLDEN_FINGERPRINTS['v8 stack'])
  })

  test('a file counts by its lower-cased base name, without query, fragment or a content hash of 8 or more hex digits', () => {
    const cases: [string, string][] = [
      ['/srv/app/Main.3f9a2b1c.js', 'main.js'],
      ['https://cdn.example.com/static/js/main-3f9a2b1c4d.chunk.js?v=2#x', 'main.chunk.js'],
      ['runtime~main.0a1b2c3d4e5f6a7b.js', 'runtime~main.js'],
      ['C:\\app\\src\\Users.ts', 'users.ts'],
      // not content hashes: no separator before, no digit, 7 digits, no extension after, not all hex
      ['abcdef12.js', 'abcdef12.js'],
      ['/a/vendor.deadbeefcafe.min.js', 'vendor.deadbeefcafe.min.js'],
      ['/a/app.1234567.js', 'app.1234567.js'],
      ['/a/app.12345678', 'app.12345678'],
      ['/a/b.c0ffee12-7.js', 'b.c0ffee12-7.js'],
    ]
    for (const [path, base] of cases) assert.equal(fileBasename(path), base, path)
  })

  test('the same input in another project has another fingerprint', () => {
    assert.notEqual(computeGrouping('prj_other', GOLDEN_INPUTS['v8 stack']).fingerprint, GOLDEN_FINGERPRINTS['v8 stack'])
  })
})
