import fs from 'node:fs'
import path from 'node:path'
import { startTestPortal } from '../support/portal.ts'
import { FAST_WEBHOOKS, createEndpoint, deliver, endedDelivery } from '../webhooks/api.ts'
import { startReceiver } from '../webhooks/receiver.ts'
import { openBrowser, signIn } from './browser.ts'
import { TRACE_ID, captureError, seedShop } from './seed.ts'

/** Screenshots of the main pages over seeded data, for the README: `npm run screenshots`. */
const OUT = path.resolve(import.meta.dirname, '../../docs/screenshots')

const t = await startTestPortal('sqlite', FAST_WEBHOOKS)
const receiver = await startReceiver()
const browser = await openBrowser()
try {
  const shop = await seedShop(t)
  const { fingerprint } = await captureError(t, shop)
  await captureError(t, shop, { name: 'RangeError', message: 'Invalid array length', stack: undefined, environment: 'staging' })
  const endpoint = await createEndpoint(t, shop.id, receiver.url('/fail'))
  const { deliveries } = await deliver(t, shop.id, 'invoice.paid', { invoice: 'inv_7', amount: 42 }, [endpoint.id])
  await endedDelivery(t, deliveries[0].id)

  const page = await browser.context.newPage()
  await page.setViewportSize({ width: 1200, height: 720 })
  fs.mkdirSync(OUT, { recursive: true })
  const shots: [name: string, url: string, ready: string][] = [
    ['projects', '/', 'shop'],
    ['errors', `/p/${shop.id}/errors`, 'RangeError'],
    ['error-group', `/p/${shop.id}/errors/${fingerprint}`, 'computeInvoice'],
    ['logs', `/p/${shop.id}/logs`, 'sent 14 reminder e-mails'],
    ['trace', `/p/${shop.id}/traces/${TRACE_ID}`, 'SELECT invoices'],
    ['deploys', `/p/${shop.id}/deploys`, '1.5.0'],
    ['costs', `/p/${shop.id}/costs`, 'storage'],
    ['performance', `/p/${shop.id}/performance?metric=http.latency&service=api`, 'p95'],
    ['delivery', `/p/${shop.id}/webhooks/deliveries/${deliveries[0].id}`, 'Attempt 3'],
  ]
  await signIn(page, t.url, t.adminToken)
  for (const [name, url, ready] of shots) {
    await page.goto(t.url + url)
    await page.getByText(ready).first().waitFor()
    await page.screenshot({ path: path.join(OUT, `${name}.png`) })
    console.log(`docs/screenshots/${name}.png`)
  }
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.getByLabel('Access token').waitFor()
  await page.screenshot({ path: path.join(OUT, 'sign-in.png') })
} finally {
  await browser.close()
  await receiver.close()
  await t.close()
}
