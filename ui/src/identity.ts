import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type { components } from './api-types.generated.ts'

/** GET /api/me: the signed-in token. */
export type Me = components['schemas']['Identity']

export const MeContext = createContext<Me | null>(null)

/** Viewers may only read: pages show write controls to admins only (the API refuses viewers' writes anyway). */
export function useCanWrite(): boolean {
  return useContext(MeContext)?.role === 'admin'
}
