// dist/server: src/ and the packages it uses bundled by esbuild into a few files. Node loads it in about a
// fifth of the time it takes to load the TypeScript sources through tsx and the ~1,700 files of their
// packages one by one, which was most of a start (`portal help`: 0.6 s against 2.9 s).
// `node bin/server-bundle.js` builds it; `npm ci`, `npm start`, `npm test` and `npm run bench` do so first.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const SOURCES = path.join(ROOT, 'src')
const OUT_DIR = path.join(ROOT, 'dist/server')
const ENTRY = path.join(OUT_DIR, 'portal.mjs')

/** The latest change under `dir`: a file's, or a folder's own (a file removed or renamed). */
function newestSource(dir) {
  let newest = fs.statSync(dir).mtimeMs
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestSource(file) : fs.statSync(file).mtimeMs)
  }
  return newest
}

/** The bundle's URL when it was built after the last change to src/; null otherwise, so a stale bundle never runs. */
export function freshBundle() {
  try {
    return fs.statSync(ENTRY).mtimeMs >= newestSource(SOURCES) ? pathToFileURL(ENTRY).href : null
  } catch {
    return null
  }
}

/**
 * What the server bundle and the test bundle (bin/test.js) are built with. Left out: native addons, and
 * pino, whose transports load its files by path in worker threads.
 */
export const bundleOptions = {
  bundle: true,
  // dynamic imports (DuckDB, the backup command) stay separate files, loaded only when used
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outExtension: { '.js': '.mjs' },
  external: ['better-sqlite3', '@duckdb/node-api', 'pino'],
  // CommonJS packages in an ES module bundle call require()
  banner: { js: "import { createRequire as bundleCreateRequire } from 'node:module'; const require = bundleCreateRequire(import.meta.url);" },
  logLevel: 'warning',
}

export async function buildBundle() {
  const esbuild = await import('esbuild')
  const staging = `${OUT_DIR}.${process.pid}`
  await esbuild.build({
    ...bundleOptions,
    // The ingest writer's worker thread runs a script of its own, beside the chunk that starts it (src/ingest/ingest-writer.ts).
    entryPoints: { portal: path.join(SOURCES, 'cli/portal.ts'), 'ingest-writer-thread': path.join(SOURCES, 'ingest/ingest-writer-thread.ts') },
    define: { PORTAL_INGEST_WRITER_THREAD: JSON.stringify('./ingest-writer-thread.mjs') },
    outdir: staging,
  })
  // one rename: a portal starting meanwhile sees the old bundle or the new one, never half of one
  fs.rmSync(OUT_DIR, { recursive: true, force: true })
  fs.renameSync(staging, OUT_DIR)
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await buildBundle()
