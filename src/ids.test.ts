import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newEventId, newId } from './ids.ts'

const LAYOUT = /^evt_[0-9a-hjkmnp-tv-z]{26}$/

test('event ids keep the layout of every id, sort by time and then by arrival, and never repeat', () => {
  const now = Date.UTC(2026, 10, 27, 12)
  const sameMillisecond = Array.from({ length: 50_000 }, () => newEventId(now))
  const later = newEventId(now + 1)
  for (const id of [...sameMillisecond, later, newId('evt', now)]) assert.match(id, LAYOUT)
  assert.equal(new Set(sameMillisecond).size, sameMillisecond.length)
  assert.deepEqual([...sameMillisecond].sort(), sameMillisecond, 'ids of one millisecond sort in the order they were made')
  assert.ok(later > sameMillisecond.at(-1)!, 'a later millisecond sorts after')
  assert.ok(newEventId(now - 1) < sameMillisecond[0], 'an earlier millisecond (an older ts) sorts before')
  assert.equal(newEventId(now).slice(0, 14), newId('evt', now).slice(0, 14), 'the time part is newId’s')
})
