import dns from 'node:dns'
import net from 'node:net'
import { Agent, buildConnector } from 'undici'

/** Ranges an outgoing webhook may not reach unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is true. */
const INSIDE = new net.BlockList()
for (const [address, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  INSIDE.addSubnet(address, prefix, 'ipv4')
}
for (const [address, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // old site-local
  ['ff00::', 8], // multicast
  ['100::', 64], // discard
] as const) {
  INSIDE.addSubnet(address, prefix, 'ipv6')
}

/** IPv6 forms that carry an IPv4 address: NAT64 (64:ff9b::/96), 6to4 (2002::/16), IPv4-compatible (::/96). */
function embeddedIpv4(address: string): string | undefined {
  const groups = expandIpv6(address)
  if (!groups) return undefined
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0)) return v4(groups[6], groups[7])
  if (groups[0] === 0x2002) return v4(groups[1], groups[2])
  if (groups.slice(0, 6).every((g) => g === 0)) return v4(groups[6], groups[7])
  return undefined
}

function expandIpv6(address: string): number[] | undefined {
  let text = address
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number)
    text = text.slice(0, -dotted[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::')
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : [])
  const left = parse(head)
  const right = parse(tail)
  const groups = tail === undefined ? left : [...left, ...new Array(8 - left.length - right.length).fill(0), ...right]
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined
}

/** Why a webhook may not connect to `address` (an IP literal), or undefined when it may. */
function insideAddressReason(address: string): string | undefined {
  const family = net.isIP(address)
  if (family === 0) return `${address} is not an IP address`
  if (family === 4) return INSIDE.check(address, 'ipv4') ? `${address} is a loopback, private, link-local or reserved address` : undefined
  // BlockList also matches IPv4-mapped forms (::ffff:a.b.c.d) against the IPv4 ranges.
  if (INSIDE.check(address, 'ipv6')) return `${address} is a loopback, private, link-local or reserved address`
  const inner = embeddedIpv4(address)
  if (inner && INSIDE.check(inner, 'ipv4')) return `${address} carries ${inner}, a loopback, private, link-local or reserved address`
  return undefined
}

class RefusedAddressError extends Error {
  readonly code = 'WEBHOOK_ADDRESS_REFUSED'
}

export function isRefusedAddress(error: unknown): boolean {
  return error instanceof RefusedAddressError || (error as { code?: string })?.code === 'WEBHOOK_ADDRESS_REFUSED'
}

/** A DNS lookup that drops answers pointing inside and fails when none is left. */
const guardedLookup: net.LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 4)
    const allowed = addresses.filter((answer) => insideAddressReason(answer.address) === undefined)
    if (allowed.length === 0) {
      const refused = new RefusedAddressError(`${hostname} resolves only to loopback, private or reserved addresses (${addresses.map((a) => a.address).join(', ')})`)
      return callback(refused as NodeJS.ErrnoException, '', 4)
    }
    if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, allowed)
    callback(null, allowed[0].address, allowed[0].family)
  })
}

/**
 * The HTTP client of deliveries. With the guard on, it checks the address actually connected to:
 * IP literals before connecting, DNS answers in the lookup, and the socket's peer once connected.
 */
export function createDeliveryAgent(options: { allowPrivateNetworks: boolean; timeoutMs: number; connections: number }): Agent {
  const common = { headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs, connections: options.connections, keepAliveTimeout: 4_000 }
  if (options.allowPrivateNetworks) return new Agent({ ...common, connect: { timeout: options.timeoutMs } })
  const connect = buildConnector({ timeout: options.timeoutMs, lookup: guardedLookup } as buildConnector.BuildOptions)
  return new Agent({
    ...common,
    connect(connectOptions, callback) {
      const host = connectOptions.hostname.replace(/^\[|\]$/g, '')
      const literalReason = net.isIP(host) ? insideAddressReason(host) : undefined
      if (literalReason) return callback(new RefusedAddressError(literalReason), null)
      connect(connectOptions, (error, socket) => {
        if (error) return callback(error, null)
        const peerReason = insideAddressReason(socket.remoteAddress ?? '')
        if (peerReason === undefined) return callback(null, socket)
        socket.destroy()
        callback(new RefusedAddressError(`connected to ${peerReason}`), null)
      })
    },
  })
}
