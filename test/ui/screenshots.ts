import fs from 'node:fs'
import path from 'node:path'
import { startTestPortal } from '../support/portal.ts'
import { FAST_WEBHOOKS, createEndpoint, deliver, endedDelivery } from '../webhooks/api.ts'
import { startReceiver } from '../webhooks/receiver.ts'
import { openBrowser, signIn } from './browser.ts'
import { captureError, seedShop } from './seed.ts'
import { FAILING_TRACE_ID, seedInvestigation } from './seed-investigation.ts'
import { createProject } from '../support/portal.ts'

/** Screenshots of the main pages over seeded data, at 1440 px and at 390 px (`-390` names): `npm run screenshots`. */
const OUT = path.resolve(import.meta.dirname, '../../docs/screenshots')

const t = await startTestPortal('sqlite', FAST_WEBHOOKS)
const receiver = await startReceiver()
const browser = await openBrowser()
try {
  const shop = await seedShop(t)
  await seedInvestigation(t, shop)
  const fresh = await createProject(t, 'fresh')
  const { fingerprint } = await captureError(t, shop)
  await captureError(t, shop, { name: 'RangeError', message: 'Invalid array length', stack: undefined, environment: 'staging' })
  const endpoint = await createEndpoint(t, shop.id, receiver.url('/fail'))
  const healthy = await createEndpoint(t, shop.id, receiver.url('/ok/crm'))
  const { deliveries } = await deliver(t, shop.id, 'invoice.paid', { invoice: 'inv_7', amount: 42 }, [endpoint.id, healthy.id])
  for (const delivery of deliveries) await endedDelivery(t, delivery.id)

  const page = await browser.context.newPage()
  fs.mkdirSync(OUT, { recursive: true })
  const shots: [name: string, url: string, ready: string][] = [
    ['projects', '/', 'shop'],
    ['errors', `/p/${shop.id}/errors`, 'RangeError'],
    ['error-group', `/p/${shop.id}/errors/${fingerprint}`, 'computeInvoice'],
    ['logs', `/p/${shop.id}/logs`, 'sent 14 reminder e-mails'],
    ['trace', `/p/${shop.id}/traces/${FAILING_TRACE_ID}`, 'create order'],
    ['traces', `/p/${shop.id}/traces`, 'POST /orders'],
    ['webhooks', `/p/${shop.id}/webhooks`, 'failing'],
    ['configs', `/p/${shop.id}/configs?path=config%2Fapp.yaml`, 'retries: 5'],
    ['repository', `/p/${shop.id}/repository`, 'fix/checkout-timeout'],
    ['onboarding', `/p/${fresh.id}`, 'Send your first events'],
    ['deploys', `/p/${shop.id}/deploys`, '1.5.0'],
    ['costs', `/p/${shop.id}/costs`, 'storage'],
    ['performance', `/p/${shop.id}/performance?metric=http.latency&service=api`, 'p95'],
    ['delivery', `/p/${shop.id}/webhooks/deliveries/${deliveries[0].id}`, 'Attempt 3'],
  ]
  await signIn(page, t.url, t.adminToken)
  for (const [width, height, suffix] of [[1440, 900, ''], [390, 844, '-390']] as const) {
    await page.setViewportSize({ width, height })
    for (const [name, url, ready] of shots) {
      await page.goto(t.url + url)
      // visible: a chart's SVG <title> can hold the same text, hidden
      await page.getByText(ready).filter({ visible: true }).first().waitFor()
      // the trace's error span opened, so its attribute table is in the picture
      if (name === 'trace') await page.locator('.span-name', { hasText: 'charge' }).click()
      await page.screenshot({ path: path.join(OUT, `${name}${suffix}.png`), fullPage: suffix !== '' })
      console.log(`docs/screenshots/${name}${suffix}.png`)
    }
  }
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.getByLabel('Access token').waitFor()
  await page.screenshot({ path: path.join(OUT, 'sign-in.png') })
} finally {
  await browser.close()
  await receiver.close()
  await t.close()
}
