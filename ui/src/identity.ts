import { createContext } from 'preact'
import { useContext } from 'preact/hooks'

/** GET /api/me: the signed-in token. */
export interface Me {
  tokenId: string
  orgId: string
  role: 'admin' | 'viewer'
  name: string
}

export const MeContext = createContext<Me | null>(null)

/** Viewers may only read: pages show write controls to admins only (the API refuses viewers' writes anyway). */
export function useCanWrite(): boolean {
  return useContext(MeContext)?.role === 'admin'
}
