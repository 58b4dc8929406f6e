import net from 'node:net'

export interface TcpProxy {
  /** `127.0.0.1:<port>`, to put in a connection URL in place of the real server's address */
  address: string
  port: number
  /** Destroys every live connection and refuses new ones: the server has gone away. */
  cut(): void
  /** Forwards new connections again: the server is back. */
  restore(): void
  close(): Promise<void>
}

/**
 * A loopback TCP proxy in front of a shared server (PostgreSQL, Redis) that a test can cut and
 * restore, to simulate an outage without stopping the server other tests are using.
 */
export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>()
  let open = true
  const track = (socket: net.Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
    socket.on('error', () => socket.destroy())
  }
  const server = net.createServer((client) => {
    track(client)
    if (!open) return void client.destroy()
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
    open = false
    for (const socket of sockets) socket.destroy()
  }
  return {
    address: `127.0.0.1:${port}`,
    port,
    cut,
    restore() {
      open = true
    },
    async close() {
      cut()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
