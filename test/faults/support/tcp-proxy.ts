import net from 'node:net'

export interface TcpProxy {
  /** `127.0.0.1:<port>`, to put in a connection URL in place of the real server's address */
  address: string
  /** Destroys every live connection and refuses new ones: the server has gone away. */
  cut(): void
  /**
   * Stops forwarding without closing anything, as a network partition does: live connections and new
   * ones stay open and silent.
   */
  stall(): void
  /** Forwards new connections again: the server is back (connections held by `stall` are reset). */
  restore(): void
  close(): Promise<void>
}

/**
 * A loopback TCP proxy in front of a shared server (PostgreSQL, Redis) that a test can cut and
 * restore, to simulate an outage without stopping the server other tests are using.
 */
export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>()
  let mode: 'open' | 'cut' | 'stalled' = 'open'
  const track = (socket: net.Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
    socket.on('error', () => socket.destroy())
  }
  const server = net.createServer((client) => {
    track(client)
    if (mode === 'cut') return void client.destroy()
    if (mode === 'stalled') return
    const upstream = net.connect(targetPort, targetHost)
    track(upstream)
    client.pipe(upstream)
    upstream.pipe(client)
    client.once('close', () => upstream.destroy())
    upstream.once('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  const cut = () => {
    mode = 'cut'
    for (const socket of sockets) socket.destroy()
  }
  return {
    address: `127.0.0.1:${port}`,
    cut,
    stall() {
      mode = 'stalled'
      for (const socket of sockets) {
        socket.unpipe()
        socket.pause()
      }
    },
    restore() {
      if (mode === 'stalled') cut()
      mode = 'open'
    },
    async close() {
      cut()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
