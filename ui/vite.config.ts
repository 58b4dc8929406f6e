import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { defineConfig, type Plugin } from 'vite'

const require = createRequire(import.meta.url)

/** Scalar's self-contained browser bundle, copied into the build so the API reference loads nothing from a CDN. */
function scalarStandalone(): Plugin {
  return {
    name: 'scalar-standalone',
    apply: 'build',
    writeBundle(options) {
      const target = path.join(options.dir!, 'reference', 'scalar-standalone.js')
      fs.mkdirSync(path.dirname(target), { recursive: true })
      fs.copyFileSync(require.resolve('@scalar/api-reference/browser/standalone.js'), target)
    },
  }
}

// Preact through the automatic JSX runtime; no plugin needed for a build without hot reload.
export default defineConfig({
  root: import.meta.dirname,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  resolve: { alias: { react: 'preact/compat' } },
  plugins: [scalarStandalone()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
    rollupOptions: { input: { app: path.join(import.meta.dirname, 'index.html'), reference: path.join(import.meta.dirname, 'reference', 'index.html') } },
  },
})
