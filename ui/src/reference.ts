import { session } from './api.ts'

/** The global the Scalar standalone bundle (copied into the build by vite.config.ts) defines. */
declare global {
  interface Window {
    Scalar: { createApiReference(target: string | HTMLElement, configuration: Record<string, unknown>): unknown }
  }
}

const status = document.getElementById('reference-status')!

// The document needs a bearer like every API route: the UI's own session token, when signed in.
async function showReference() {
  const token = session.token()
  if (!token) {
    status.innerHTML = 'Sign in to the <a href="/">portal</a> first: the API reference is read with your access token.'
    return
  }
  const response = await fetch('/api/openapi.json', { headers: { authorization: `Bearer ${token}` } })
  if (!response.ok) {
    status.textContent = `The API document could not be read: ${response.status}.`
    return
  }
  status.remove()
  window.Scalar.createApiReference('#reference', {
    content: await response.json(),
    // Everything from this portal: no web fonts, telemetry or proxy from a CDN (the CSP would refuse them anyway).
    withDefaultFonts: false,
    telemetry: false,
    hideClientButton: true,
    showDeveloperTools: 'never',
    authentication: { preferredSecurityScheme: 'accessToken', http: { bearer: { token } } },
  })
}

void showReference()
