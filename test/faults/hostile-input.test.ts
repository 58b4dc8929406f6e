import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import fc from 'fast-check'
import { hmacSha256Hex } from '../../src/identity/secrets.ts'
import { DEFAULT_ORG_ID } from '../../src/identity/store.ts'
import { BODY_LIMIT_BYTES } from '../../src/server.ts'
import { DIALECTS, createTestDatabase, requester, startTestPortal, type TestDatabase, type TestPortal } from '../support/portal.ts'
import { killPortal, runPortalCli, spawnPortal, type PortalProcess } from '../support/process.ts'
import { FAULTS_ENV, operationsOf, pathOf, seedOrganisation, validBodyOf, isWrite, type Operation, type Organisation } from './organisations.ts'

// Property: whatever arrives, the portal answers below 500 (a 2xx where the input happens to be
// valid), every 4xx is an RFC 9457 problem, the process survives, and no prototype is polluted.
// The seed is fixed so a failure replays; FUZZ_SEED and FUZZ_RUNS (a multiplier) change them.
const SEED = Number(process.env.FUZZ_SEED ?? 20261121)
const RUNS = Number(process.env.FUZZ_RUNS ?? 1)
const runs = (count: number) => Math.max(1, Math.round(count * RUNS))

/** One hostile request: its body bytes (none for reads), its content type (`null`: none) and extra headers. */
interface Hostile {
  body?: Buffer
  contentType?: string | null
  headers?: Record<string, string>
}

interface Target {
  base: string
  org: Organisation
  /** requests sent, for the report */
  cases: number
  /** the statuses each operation answered, to be checked against the OpenAPI document */
  statuses: Map<Operation, Set<number>>
}

const PROTOTYPE_KEYS_BEFORE = prototypeKeys()

function prototypeKeys() {
  return [Object.prototype, Array.prototype, Function.prototype, String.prototype].map((proto) => Reflect.ownKeys(proto).map(String).sort().join(','))
}

/** Sends one request as its route's caller would (the right credential; ingest signed over the exact bytes) and checks the answer. */
async function sendHostile(target: Target, operation: Operation, path: string, hostile: Hostile): Promise<void> {
  const headers: Record<string, string> = { ...hostile.headers }
  if (operation.security === 'accessToken' || operation.security === 'any') headers.authorization = `Bearer ${target.org.adminToken}`
  if (operation.security === 'apiKey') headers.authorization = `Bearer ${target.org.project.key}`
  const contentType = hostile.contentType === undefined ? 'application/json' : hostile.contentType
  if (hostile.body !== undefined && contentType !== null) headers['content-type'] = contentType
  if (operation.template === '/api/ingest') headers['x-service-signature'] = hmacSha256Hex(target.org.project.webhookSecret, hostile.body ?? '')
  target.cases++
  const what = `${operation.method} ${path.slice(0, 200)} (${hostile.body?.length ?? 0} bytes, ${contentType})`
  let response: Response
  try {
    response = await fetch(target.base + path, { method: operation.method, headers, body: hostile.body as Uint8Array<ArrayBuffer> | undefined })
  } catch (error) {
    throw new Error(`${what}: no answer (${(error as Error).cause ?? error})`)
  }
  assertAnswer(response.status, response.headers.get('content-type'), await response.text(), what, foreignErrorShape(operation.template))
  if (!target.statuses.has(operation)) target.statuses.set(operation, new Set())
  target.statuses.get(operation)!.add(response.status)
}

/** The query APIs answer their own refusals in the shape of the API they speak (src/query-apis/): Loki's and Tempo's plain text, Prometheus' error body. */
function foreignErrorShape(template: string): 'text' | 'prometheus' | undefined {
  if (template.startsWith('/loki/') || template.startsWith('/tempo/')) return 'text'
  if (template.startsWith('/prometheus/')) return 'prometheus'
  return undefined
}

function assertAnswer(status: number, contentType: string | null, text: string, what: string, foreign?: 'text' | 'prometheus') {
  assert.ok(status < 500, `${what}: ${status} ${text.slice(0, 300)}`)
  if (status < 400) return
  if (foreign === 'text' && /^text\/plain/.test(contentType ?? '')) return assert.ok(text.length > 0, `${what}: an empty refusal`)
  if (foreign === 'prometheus' && /^application\/json/.test(contentType ?? '')) {
    const refusal = JSON.parse(text)
    assert.equal(refusal.status, 'error', what)
    return assert.equal(typeof refusal.error, 'string', what)
  }
  assert.match(contentType ?? '', /^application\/problem\+json/, `${what}: ${status} with content-type ${contentType}`)
  const problem = JSON.parse(text)
  assert.equal(typeof problem.type, 'string', what)
  assert.equal(typeof problem.title, 'string', what)
  assert.equal(problem.status, status, what)
  assert.equal(typeof problem.detail, 'string', what)
  assert.equal(typeof problem.code, 'string', what)
}

// ---- bodies ------------------------------------------------------------------------------------

const json = (value: unknown) => Buffer.from(JSON.stringify(value))

/** A hostile body that prints as its size and start in a counterexample, not as a megabyte of byte values. */
function hostile(body: Buffer, contentType?: string | null): Hostile {
  return { body, contentType, [fc.toStringMethod]: () => `${body.length} bytes (${contentType}): ${JSON.stringify(body.subarray(0, 160).toString())}` } as Hostile
}

/** Runs a property with the suite's seed; the failing request's assertion is in the report. */
function check<T>(arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, numRuns: number) {
  return fc.assert(fc.asyncProperty(arbitrary, predicate), { seed: SEED, numRuns: runs(numRuns), includeErrorInReport: true })
}

/** The valid body's JSON text with `inserted` (raw text, `"key":value`) put first into one of its objects, chosen by `at`. */
function insertIntoObject(valid: object, inserted: string, at: number): Buffer {
  const text = JSON.stringify(valid)
  const openings = [...text.matchAll(/\{/g)].map((match) => match.index!)
  const position = openings[at % openings.length] + 1
  const separator = text[position] === '}' ? '' : ','
  return Buffer.from(text.slice(0, position) + inserted + separator + text.slice(position))
}

/** The valid body with the value of one of its top-level fields replaced by raw JSON text (or bytes). */
function replaceField(valid: Record<string, unknown>, field: string, raw: string | Buffer): Buffer {
  const marker = `__hostile_${randomBytes(4).toString('hex')}__`
  const [head, tail] = JSON.stringify({ ...valid, [field]: marker }).split(`"${marker}"`)
  return Buffer.concat([Buffer.from(head), Buffer.from(raw), Buffer.from(tail)])
}

const fieldOf = (valid: Record<string, unknown>) => fc.constantFrom(...Object.keys(valid))

const EXTREME_NUMBERS = ['1e400', '-1e400', '-0', '18446744073709551616', '-9223372036854775809', '1e-400', '0.1e999999999', '123456789012345678901234567890.5', '9007199254740993']
const INVALID_UTF8 = [0xff, 0xfe, 0xc0, 0xc1, 0x80, 0xbf, 0xed, 0xa0, 0xf5, 0xf8, 0x00, 0x22, 0x5c, 0x61]
const WRONG_CONTENT_TYPES = [
  null,
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=hostile',
  'application/json; charset=utf-16',
  'application/jsonp',
  'application/json, text/html',
  'application/problem+json',
  'APPLICATION/JSON',
  'application/json; charset=',
  '*/*',
  'application/octet-stream',
]

/** A class of hostile bodies, each built from the route's valid body and its body limit. */
interface BodyClass {
  name: string
  runs: number
  arbitrary(valid: Record<string, unknown>, limitBytes: number): fc.Arbitrary<Hostile>
}

const BODY_CLASSES: BodyClass[] = [
  {
    name: 'random JSON values',
    runs: 40,
    arbitrary: () =>
      fc.oneof(
        fc.jsonValue().map((value) => hostile(json(value))),
        fc.anything().map((value) => hostile(Buffer.from(JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? `${v}` : v)) ?? 'undefined'))),
      ),
  },
  {
    name: 'the valid body with random fields changed or added',
    runs: 40,
    arbitrary: (valid) =>
      fc.oneof(
        fc.tuple(fieldOf(valid), fc.jsonValue()).map(([field, value]) => hostile(json({ ...valid, [field]: value }))),
        fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1, maxKeys: 3 }).map((extra) => hostile(json({ ...valid, ...extra }))),
      ),
  },
  {
    name: '__proto__, constructor and prototype keys at any depth',
    runs: 20,
    arbitrary: (valid) =>
      fc
        .tuple(
          fc.constantFrom('"__proto__":{"polluted":"yes"}', '"constructor":{"prototype":{"polluted":"yes"}}', '"prototype":{"polluted":"yes"}', '"__proto__":null', '"constructor":{"polluted":"yes"}'),
          fc.nat(),
        )
        .map(([inserted, at]) => hostile(insertIntoObject(valid, inserted, at))),
  },
  {
    name: 'duplicate keys',
    runs: 15,
    arbitrary: (valid) =>
      fc.tuple(fieldOf(valid), fc.jsonValue(), fc.boolean()).map(([field, value, first]) => {
        const duplicate = `${JSON.stringify(field)}:${JSON.stringify(value)}`
        const text = JSON.stringify(valid)
        return hostile(Buffer.from(first ? `{${duplicate},${text.slice(1)}` : `${text.slice(0, -1)},${duplicate}}`))
      }),
  },
  {
    name: 'nesting far beyond the depth limits',
    runs: 12,
    arbitrary: (valid) =>
      fc.tuple(fc.integer({ min: 60, max: 150_000 }), fc.boolean(), fc.option(fieldOf(valid), { nil: undefined })).map(([depth, arrays, field]) => {
        const deep = arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + 'null' + '}'.repeat(depth)
        return hostile(field === undefined ? Buffer.from(deep) : replaceField(valid, field, deep))
      }),
  },
  {
    name: 'huge strings, just under and over the body limit',
    runs: 6,
    arbitrary: (valid, limitBytes) =>
      fc
        .tuple(fieldOf(valid), fc.constantFrom(-256, -64, 1, 1024, limitBytes))
        .map(([field, overLimit]) => hostile(replaceField(valid, field, `"${'x'.repeat(Math.max(0, limitBytes + overLimit - JSON.stringify(valid).length))}"`))),
  },
  {
    name: 'huge, tiny and out-of-range numbers',
    runs: 15,
    arbitrary: (valid) =>
      fc
        .tuple(fc.option(fieldOf(valid), { nil: undefined }), fc.constantFrom(...EXTREME_NUMBERS))
        .map(([field, number]) => hostile(field === undefined ? Buffer.from(number) : replaceField(valid, field, number))),
  },
  {
    name: 'invalid UTF-8 inside strings and as the whole body',
    runs: 15,
    arbitrary: (valid) =>
      fc
        .tuple(fc.option(fieldOf(valid), { nil: undefined }), fc.array(fc.constantFrom(...INVALID_UTF8), { minLength: 1, maxLength: 48 }))
        .map(([field, bytes]) =>
          hostile(field === undefined ? Buffer.from(bytes) : replaceField(valid, field, Buffer.concat([Buffer.from('"'), Buffer.from(bytes), Buffer.from('"')]))),
        ),
  },
  {
    name: 'truncated JSON',
    runs: 15,
    arbitrary: (valid) => fc.nat().map((cut) => hostile(json(valid).subarray(0, cut % JSON.stringify(valid).length))),
  },
  {
    name: 'wrong content types',
    runs: 15,
    arbitrary: (valid) =>
      fc.tuple(fc.constantFrom(...WRONG_CONTENT_TYPES), fc.constantFrom('json', 'form', 'multipart')).map(([contentType, shape]) =>
        hostile(
          Buffer.from(
            shape === 'json'
              ? JSON.stringify(valid)
              : shape === 'form'
                ? new URLSearchParams(Object.entries(valid).map(([k, v]) => [k, String(v)])).toString()
                : `--hostile\r\ncontent-disposition: form-data; name="body"\r\n\r\n${JSON.stringify(valid)}\r\n--hostile--\r\n`,
          ),
          contentType,
        ),
      ),
  },
]

// ---- query strings, path parameters, headers ---------------------------------------------------

const HOSTILE_VALUES = ['-1', '0', '501', '1e400', 'NaN', 'Infinity', '', 'null', 'true', '[]', '{}', '%', '%00', '\u0000', '2026-13-45T99:99:99Z', 'eyJ4IjoxfQ', '!!!', '..', '__proto__']
const hostileValue = fc.oneof(fc.constantFrom(...HOSTILE_VALUES), fc.string(), fc.string({ unit: 'binary' }), fc.integer().map(String))
// Lone surrogates (fc's binary strings) cannot be percent-encoded; UTF-8 turns them into U+FFFD as a client would.
const wellFormed = (text: string) => Buffer.from(text).toString()
const encode = (text: string) => encodeURIComponent(wellFormed(text))

function queryArbitrary(operation: Operation) {
  const names = fc.constantFrom(...operation.queryParameters, 'unknown', 'field.requestId', '__proto__', 'constructor', 'project_id[]', 'limit[]', 'toString', 'hasOwnProperty')
  return fc.array(fc.tuple(names, hostileValue), { minLength: 1, maxLength: 5 })
}

/** A path segment: an id percent-encoded as a client would, or a malformed escape sent as it is. */
const hostileSegment = fc.oneof(
  fc
    .oneof(
      fc.constantFrom('prj_missing', 'whe_missing', '.', '..', '%', 'x'.repeat(5000), 'x'.repeat(20_000), '\u0000', '🙂', 'null', '__proto__', 'constructor', '0'.repeat(64)),
      fc.string(),
      fc.string({ unit: 'binary', maxLength: 300 }),
    )
    .map(encode),
  fc.constantFrom('%', '%zz', '%E0%A4%A', '%C0%AF', '%ED%A0%80', '%FF', '..%2F..%2F'),
)

/** Every route class against one portal; returns the number of requests sent. */
function fuzzSuite(name: string, open: () => Promise<{ target: Target; operations: Operation[]; document: any; close(): Promise<void> }>, scale: number) {
  describe(name, () => {
    let target: Target
    let operations: Operation[]
    let document: any
    let close: () => Promise<void>
    before(async () => ({ target, operations, document, close } = await open()))
    after(async () => {
      console.log(`# ${name}: ${target.cases} hostile requests (seed ${SEED})`)
      await close()
    })

    const bodyOperations = () => operations.filter((operation) => operation.hasBody)
    const limitOf = (operation: Operation) => (operation.template === '/api/ingest' ? Number(FAULTS_ENV.INGEST_RATE_LIMIT_MAX_BATCH_BYTES) : BODY_LIMIT_BYTES)

    for (const bodyClass of BODY_CLASSES) {
      test(`bodies: ${bodyClass.name}`, async () => {
        for (const operation of bodyOperations()) {
          const valid = validBodyOf(operation, target.org)
          const path = pathOf(operation, target.org)
          await check(bodyClass.arbitrary(valid, limitOf(operation)), (body) => sendHostile(target, operation, path, body), bodyClass.runs * scale)
        }
      })
    }

    test('query strings: bad limits, garbage cursors, unknown filters, repeated and prototype-named parameters', async () => {
      for (const operation of operations.filter((operation) => !isWrite(operation))) {
        const path = pathOf(operation, target.org)
        await check(
          queryArbitrary(operation),
          (pairs) => {
            const query = pairs.map(([key, value]) => `${encode(key)}=${encode(value)}`).join('&')
            return sendHostile(target, operation, `${path}${path.includes('?') ? '&' : '?'}${query}`, {})
          },
          20 * scale,
        )
      }
    })

    test('path parameters: unknown, malformed, huge and unicode ids on every route', async () => {
      for (const operation of operations.filter((operation) => operation.template.includes('{'))) {
        const body = operation.hasBody ? json(validBodyOf(operation, target.org)) : undefined
        await check(hostileSegment, (segment) => sendHostile(target, operation, pathOf(operation, target.org, () => segment), { body }), 15 * scale)
      }
    })

    test('headers: one of 20 KB, thousands of them, and a huge bearer', async () => {
      for (const operation of operations) {
        // a delete that succeeded would take away what the other requests read
        const path = pathOf(operation, target.org, operation.method === 'DELETE' ? () => 'missing' : undefined)
        const body = operation.hasBody ? json(validBodyOf(operation, target.org)) : undefined
        const many = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`x-hostile-${i}`, 'v']))
        for (const headers of [{ 'x-hostile': 'h'.repeat(20 * 1024) }, many(3000), many(500), { 'x-hostile-unicode': encode('é🙂') }]) {
          await sendHostile(target, operation, path, { body, headers })
        }
      }
      const huge = await fetch(`${target.base}/api/projects`, { headers: { authorization: `Bearer pat_${'a'.repeat(12_000)}` } })
      assertAnswer(huge.status, huge.headers.get('content-type'), await huge.text(), 'a 12 KB bearer')
      assert.equal(huge.status, 401)
    })

    test('afterwards: nothing polluted, and the portal still reads back its resources', async () => {
      assert.equal(({} as any).polluted, undefined)
      assert.deepEqual(prototypeKeys(), PROTOTYPE_KEYS_BEFORE)
      const read = requester(target.base)
      for (const path of ['/api/me', `/api/projects/${target.org.project.id}`, `/api/webhooks/endpoints/${target.org.endpoint.id}`]) {
        const response = await read('GET', path, { token: target.org.adminToken })
        assert.equal(response.status, 200, `${path}: ${response.text}`)
        assert.ok(!response.text.includes('polluted'), `${path}: ${response.text}`)
      }
      const health = await read('GET', '/api/health')
      assert.equal(health.status, 200, health.text)
    })

    test('afterwards: every status a route answered is one the OpenAPI document lists for it', () => {
      const undocumented: string[] = []
      for (const [operation, statuses] of target.statuses) {
        const documented = Object.keys(document.paths[operation.template][operation.method.toLowerCase()].responses)
        for (const status of statuses) if (!documented.includes(String(status))) undocumented.push(`${operation.method} ${operation.template} ${status}`)
      }
      assert.deepEqual(undocumented, [])
    })
  })
}

/** The default organisation of a portal, seeded, and the operations of its OpenAPI document. */
async function seededTarget(base: string, adminToken: string, viewerToken: string) {
  const request = requester(base)
  const org = await seedOrganisation({ request, adminToken }, { id: DEFAULT_ORG_ID, adminToken, viewerToken })
  const document = await request('GET', '/api/openapi.json', { token: adminToken })
  assert.equal(document.status, 200)
  return { target: { base, org, cases: 0, statuses: new Map() }, operations: operationsOf(document.body), document: document.body }
}

for (const dialect of DIALECTS) {
  // In the test's own process, so that its Object.prototype is the portal's.
  fuzzSuite(`hostile input on ${dialect}, portal in this process`, async () => {
    const t: TestPortal = await startTestPortal(dialect, FAULTS_ENV)
    return { ...(await seededTarget(t.url, t.adminToken, t.viewerToken)), close: () => t.close() }
  }, 1)

  // As `portal serve` runs, so that a crash shows as a dead process; a lighter run of the same classes.
  fuzzSuite(`hostile input on ${dialect}, portal as its own process`, async () => {
    const database: TestDatabase = await createTestDatabase(dialect)
    const adminToken = `pat_${randomBytes(24).toString('base64url')}`
    const env = { ...FAULTS_ENV, DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, PORTAL_BOOTSTRAP_TOKEN: adminToken }
    const portal: PortalProcess = await spawnPortal(env)
    const viewerToken = await runPortalCli(env, ['token', 'create', '--role', 'viewer'])
    return {
      ...(await seededTarget(portal.url, adminToken, viewerToken)),
      async close() {
        await killPortal(portal)
        await database.drop()
      },
    }
  }, 0.25)
}
