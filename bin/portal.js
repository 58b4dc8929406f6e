#!/usr/bin/env node
// Runs the TypeScript sources directly: `npm ci && npm start` needs no build step.
import { register } from 'tsx/esm/api'

register()
await import('../src/cli/portal.ts')
