import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { parseStackTrace, scanV8Call, v8Frame } from '../../src/errors/stack-trace.ts'

// Pieces V8 lines are made of, and the ones that trip a reader by index: spaces and parentheses in
// names and paths, colons in URLs, digits without a colon, prefixes, eval sites, trailing space.
const PIECES = ['async ', 'new ', 'fn', 'Foo.bar', ' [as x]', ' (', '(', ')', ' ', ':', '12', '7', 'file:///a/b.js', '/srv/app/x.ts', 'C:\\app\\y.js', 'eval at ', 'native', 'index 0', '<anonymous>', 'a-1b2c3d4e5f.js', '\t']

/** A deterministic generator (mulberry32), so that a failure names a seed that reproduces it. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

describe('V8 stack lines', () => {
  test('the scan by index reads every line it takes as the patterns do', () => {
    const next = random(20261122)
    let taken = 0
    for (let index = 0; index < 20_000; index++) {
      const some = (most: number) => Array.from({ length: Math.floor(next() * (most + 1)) }, () => PIECES[Math.floor(next() * PIECES.length)]).join('')
      // Mostly the shape V8 prints, `name (location)`, made of any pieces; sometimes pieces alone.
      const call = next() < 0.8 ? `${some(3)} (${some(4)})${next() < 0.1 ? some(1) : ''}` : some(8)
      const line = `${' '.repeat(Math.floor(next() * 5))}at ${call}`
      const scanned = scanV8Call(line.trimStart())
      if (scanned === undefined) continue
      taken++
      assert.deepEqual(scanned, v8Frame(line), JSON.stringify(line))
    }
    assert.ok(taken > 10_000, `the scan took only ${taken} lines`)
  })

  test('lines the scan leaves to the patterns still parse', () => {
    const stack = [
      'Error: boom',
      '    at handler (/srv/app/src/a.ts:10:5)  ',
      '    at eval (eval at run (/srv/app/src/b.ts:3:7), <anonymous>:1:1)',
      '    at async (/srv/app/src/c.ts:4:2)',
      '    at /srv/app/src/d.ts:8:1',
    ].join('\n')
    assert.deepEqual(
      parseStackTrace(stack).map((frame) => [frame.function, frame.filename, frame.lineno, frame.colno]),
      [
        ['handler', '/srv/app/src/a.ts', 10, 5],
        ['eval', '/srv/app/src/b.ts', 3, 7],
        ['async', '/srv/app/src/c.ts', 4, 2],
        [null, '/srv/app/src/d.ts', 8, 1],
      ],
    )
    assert.equal(scanV8Call('at handler (/srv/app/src/a.ts:10:5)  '), undefined)
    assert.equal(scanV8Call('at async (/srv/app/src/c.ts:4:2)'), undefined)
  })

  test('a stack holding a carriage return or a line separator is read by the patterns alone, to the same frames', () => {
    const lines = ['    at loadUser (/srv/app/src/users.ts:42:13)', '    at Layer.handle [as handle_request] (/srv/app/node_modules/express/lib/router/layer.js:95:5)']
    const expected = parseStackTrace(lines.join('\n'))
    assert.equal(expected.length, 2)
    assert.deepEqual(parseStackTrace(lines.join('\r\n')), expected)
    assert.deepEqual(parseStackTrace(`${lines.join('\n')}\n\u2028`), expected)
  })
})
