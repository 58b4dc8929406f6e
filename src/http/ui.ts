import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { sendProblem } from './problem.ts'

/** Where `npm run build:ui` (run by `npm ci` through `prepare`) writes the single-page app. */
export const UI_DIST_DIR = fileURLToPath(new URL('../../ui/dist/', import.meta.url))

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
}

// The access token lives in sessionStorage, so no script but the app's own may run on its pages.
const CONTENT_SECURITY_POLICY = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

const MISSING_BUILD_PAGE =
  '<!doctype html><meta charset="utf-8"><title>Portal UI not built</title>' +
  '<p>The web UI has not been built: <code>ui/dist/index.html</code> is missing. ' +
  'Run <code>npm run build:ui</code> (or <code>npm ci</code>, which builds it), then restart the portal. The API under <code>/api/</code> works without it.</p>'

interface Asset {
  body: Buffer
  /** compressed on first request: the API reference's 3.5 MB took 120 ms of every start to gzip */
  gzipped(): Buffer
  contentType: string
  /** Vite's hashed file names never change content, so browsers may keep them for good. */
  immutable: boolean
}

/** Every file of the built app, read once at start: the app is a few files, and serving from memory keeps the first page fast. */
function loadUiAssets(distDir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>()
  if (!fs.existsSync(path.join(distDir, 'index.html'))) return assets
  for (const entry of fs.readdirSync(distDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const file = path.join(entry.parentPath, entry.name)
    const urlPath = '/' + path.relative(distDir, file).split(path.sep).join('/')
    const body = fs.readFileSync(file)
    let gzipped: Buffer | undefined
    assets.set(urlPath, {
      body,
      gzipped: () => (gzipped ??= gzipSync(body)),
      contentType: CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
      immutable: urlPath.startsWith('/assets/'),
    })
  }
  return assets
}

/**
 * Serves the web UI at every path outside `/api/`: a built file when one matches, else `index.html`
 * so that the app's own routes (`/p/prj_…/logs?level=error`) can be opened and shared. Paths under
 * `/api/` that no route serves stay problem+json 404s.
 */
export const uiPlugin: FastifyPluginAsync<{ distDir?: string }> = async (app, { distDir = UI_DIST_DIR }) => {
  const assets = loadUiAssets(distDir)
  if (assets.size === 0) app.log.warn(`the web UI is not built (no ${path.join(distDir, 'index.html')}); run npm run build:ui`)

  app.get('/*', { config: { access: 'public' }, schema: { hide: true } }, async (request, reply) => {
    const urlPath = request.url.split('?')[0]
    if (urlPath === '/api' || urlPath.startsWith('/api/')) return sendProblem(reply, 404, 'not_found', `no route for ${request.method} ${urlPath}`)
    if (assets.size === 0) return reply.code(503).type('text/html; charset=utf-8').send(MISSING_BUILD_PAGE)
    // A folder of the build (the API reference at /reference/) is its index.html.
    const asset = assets.get(urlPath) ?? assets.get(`${urlPath.replace(/\/$/, '')}/index.html`)
    if (asset) return sendAsset(request, reply, asset)
    if (path.extname(urlPath) !== '') return reply.code(404).type('text/plain; charset=utf-8').send(`no file ${urlPath} in the web UI`)
    return sendAsset(request, reply, assets.get('/index.html')!)
  })
}

function sendAsset(request: FastifyRequest, reply: FastifyReply, asset: Asset) {
  reply.type(asset.contentType).header('x-content-type-options', 'nosniff').header('vary', 'accept-encoding')
  reply.header('cache-control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
  if (asset.contentType.startsWith('text/html')) reply.header('content-security-policy', CONTENT_SECURITY_POLICY)
  if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.header('content-encoding', 'gzip').send(asset.gzipped())
  return reply.send(asset.body)
}
