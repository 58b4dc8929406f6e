import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, afterEach, before, beforeEach } from 'node:test'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import type { TestPortal } from '../support/portal.ts'

/** Debian's Chromium, installed by apt (.ci/run installs it when missing); never a browser download. */
export const CHROMIUM = '/usr/bin/chromium'

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

export interface Browser {
  context: BrowserContext
  close(): Promise<void>
}

/** Headless Chromium with a fresh profile, removed on close. */
export async function openBrowser(): Promise<Browser> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 860 },
    timezoneId: 'UTC',
    locale: 'en-GB',
  })
  context.setDefaultTimeout(10_000)
  return {
    context,
    async close() {
      await context.close()
      fs.rmSync(profile, { recursive: true, force: true })
    },
  }
}

/** Opens `url` and signs in with `token` as a person would, waiting for the signed-in header. */
export async function signIn(page: Page, url: string, token: string) {
  await page.goto(url)
  await page.getByLabel('Access token').fill(token)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
}

/** The API paths (with query) the page requests from now on. */
export function recordApiRequests(page: Page): string[] {
  const seen: string[] = []
  page.on('request', (request) => {
    const url = new URL(request.url())
    if (url.pathname.startsWith('/api/')) seen.push(url.pathname + url.search)
  })
  return seen
}

/**
 * For a describe block: a portal on SQLite (UI flows do not depend on the database) with `env`, a Chromium, and a new
 * page for each test. Call it at the top of the block; `t` and `page` are the current test's.
 */
export function chromiumSuite(env: Record<string, string> = {}): { readonly t: TestPortal; readonly page: Page } {
  let t: TestPortal
  let browser: Browser
  let page: Page
  before(async () => {
    // Loaded here, not at the top: a test that registers a module must do so before the portal's code loads.
    const { startTestPortal } = await import('../support/portal.ts')
    t = await startTestPortal('sqlite', env)
    browser = await openBrowser()
  })
  after(async () => {
    await browser?.close()
    await t?.close()
  })
  beforeEach(async () => {
    page = await browser.context.newPage()
  })
  afterEach(() => page.close())
  return {
    get t() {
      return t
    },
    get page() {
      return page
    },
  }
}

