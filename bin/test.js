#!/usr/bin/env node
// `npm test`: every test file bundled by esbuild with src/ and most packages, then run by node:test's `run()`.
// Each test file is a process of its own; through tsx each spent 1.3–2 s more CPU than from a bundle,
// loading ~1,700 package files past tsx's loader thread: a fifth of the suite's CPU. `--test-name-pattern=<regex>`
// (repeatable) narrows the tests (`npm test -- --test-name-pattern=webhook`). One file while developing:
// `node --import tsx --test <file>`.
// Stack traces name lines of dist/test; `NODE_OPTIONS=--enable-source-maps npm test` maps them back to the
// sources, for about 0.4 s of CPU more per file, which is why it is not the default.
import fs from 'node:fs'
import path from 'node:path'
import { run } from 'node:test'
import * as reporters from 'node:test/reporters'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { bundleOptions } from './server-bundle.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
process.chdir(ROOT)
const OUT_DIR = path.join(ROOT, 'dist/test')

function testFiles(dir) {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath ?? entry.path, entry.name)))
    .sort()
}

// Longest first, so that the run does not end on one long file while a core idles: the browser suites, then
// the others by size, which follows their time closely enough. The fault suites are `npm run test:faults`.
const largestFirst = (files) => files.sort((a, b) => fs.statSync(path.join(ROOT, b)).size - fs.statSync(path.join(ROOT, a)).size)
const all = [...largestFirst(testFiles('test/ui')), ...largestFirst([...testFiles('test'), ...testFiles('src'), ...testFiles('sdk/test')].filter((file) => !/^test\/(ui|faults)\//.test(file)))]
// Webhook suites time their receivers' answers against WEBHOOK_TIMEOUT_MS: they run after the rest, two at a
// time, which leaves them CPU to spare (four files at a time on two cores pushed their attempts past it).
const webhookSuite = (file) => file.startsWith('test/webhooks/') && file !== 'test/webhooks/endpoints.test.ts'
const passes = [
  { files: all.filter((file) => !webhookSuite(file)), concurrency: 4 },
  { files: all.filter(webhookSuite), concurrency: 2 },
]

/**
 * A source's `import.meta.dirname` and `import.meta.url` are its own path, not the bundle's: tests and
 * sources find fixtures, bin/ and ui/ by them.
 */
const keepSourcePaths = {
  name: 'keep-source-paths',
  setup(build) {
    build.onLoad({ filter: /\.tsx?$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined
      const source = await fs.promises.readFile(args.path, 'utf8')
      return {
        contents: source
          .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(args.path)))
          .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
        loader: args.path.endsWith('x') ? 'tsx' : 'ts',
      }
    })
  },
}

const WRITER_THREAD = 'src/ingest/ingest-writer-thread.ts'
const esbuild = await import('esbuild')
fs.rmSync(OUT_DIR, { recursive: true, force: true })
await esbuild.build({
  ...bundleOptions,
  // and the ingest writer's worker thread, whose script the bundled sources are told (src/ingest/ingest-writer.ts)
  entryPoints: [...all, WRITER_THREAD].map((file) => path.join(ROOT, file)),
  define: { PORTAL_INGEST_WRITER_THREAD: JSON.stringify(pathToFileURL(path.join(OUT_DIR, WRITER_THREAD.replace(/\.ts$/, '.mjs'))).href) },
  outbase: ROOT,
  outdir: OUT_DIR,
  sourcemap: 'linked',
  sourcesContent: false,
  plugins: [keepSourcePaths],
  // besides the server bundle's: packages that load their own files by path or hook the module loader
  // (an OpenAPI validator's meta-schemas, Sentry's and OpenTelemetry's instrumentation, Playwright's
  // browser driver, compilers, the protobuf compiler)
  external: [...bundleOptions.external, '@seriousme/openapi-schema-validator', '@sentry/*', '@opentelemetry/*', 'playwright-core', 'esbuild', 'typescript', 'tsx', 'protobufjs-cli'],
})

// `run()`, not `node --test <files>`: the command line sorts the files by path, which started the browser
// suites, the longest, last, and left the run's last 80 s to them alone.
const { values: options } = parseArgs({ options: { 'test-name-pattern': { type: 'string', multiple: true } } })
const bundled = (file) => path.join(OUT_DIR, file.replace(/\.tsx?$/, '.mjs'))
for (const { files, concurrency } of passes) {
  let failed = false
  const stream = run({ files: files.map(bundled), concurrency, testNamePatterns: options['test-name-pattern'] })
  stream.on('test:fail', ({ skip, todo }) => (failed ||= !skip && !todo))
  await new Promise((resolve, reject) => stream.compose(process.stdout.isTTY ? reporters.spec : reporters.tap).on('end', resolve).on('error', reject).pipe(process.stdout, { end: false }))
  if (failed) process.exit(1)
}
