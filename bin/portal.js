#!/usr/bin/env node
// Runs the portal from its bundle (bin/server-bundle.js) when that is up to date, otherwise from the
// TypeScript sources through tsx: `npm ci && npm start` needs no separate build step, and an edit to src/
// takes effect without one.
import { freshBundle } from './server-bundle.js'

const bundle = freshBundle()
if (bundle) {
  await import(bundle)
} else {
  const { register } = await import('tsx/esm/api')
  register()
  await import('../src/cli/portal.ts')
}
