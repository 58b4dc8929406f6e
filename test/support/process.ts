import { execFile, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'

const PORTAL_BIN = path.resolve(import.meta.dirname, '../../bin/portal.js')

/**
 * A free loopback port for a process to listen on, drawn below Linux's ephemeral range (32768–60999).
 * One the OS picked from that range could be handed again, before the process binds it, to one of the
 * portals other test files start on port 0, and the caller would then talk to that portal instead.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    const server = net.createServer()
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false))
      server.listen(port, '127.0.0.1', () => resolve(true))
    })
    if (free) {
      await new Promise((resolve) => server.close(resolve))
      return port
    }
  }
}

export interface PortalProcess {
  child: ChildProcess
  url: string
  output: () => string
}

/**
 * Runs `portal serve` as its own process (what `npm start` runs) and waits until its health answers ok (with
 * `waitFor: 'answer'`, until health answers at all: a portal started on a full disk answers 503).
 * Its output comes through pipes, or goes to `logFile` as with `npm start > portal.log`. The wait is long
 * because `npm test` runs files concurrently: a start competes with other files' portals for the CPU.
 * A `launcher` (`['prlimit', '--nofile=256']`) runs it, as a supervisor would.
 */
export async function spawnPortal(
  env: Record<string, string>,
  { timeoutMs = 120_000, logFile, launcher = [], waitFor = 'ok' }: { timeoutMs?: number; logFile?: string; launcher?: string[]; waitFor?: 'ok' | 'answer' } = {},
): Promise<PortalProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort()
  const logFd = logFile === undefined ? undefined : fs.openSync(logFile, 'a')
  const [command, ...args] = [...launcher, process.execPath, PORTAL_BIN, 'serve']
  const child = spawn(command, args, {
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdio: logFd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', logFd, logFd],
  })
  let piped = ''
  if (logFd === undefined) {
    child.stdout!.on('data', (chunk) => (piped += chunk))
    child.stderr!.on('data', (chunk) => (piped += chunk))
  } else {
    fs.closeSync(logFd) // the child has its own copy
  }
  const output = () => (logFile === undefined ? piped : fs.readFileSync(logFile, 'utf8'))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`portal exited with ${child.exitCode ?? child.signalCode}: ${output()}`)
    try {
      const { status } = await fetch(`${url}/api/health`)
      if (status === 200 || waitFor === 'answer') return { child, url, output }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  child.kill('SIGKILL')
  throw new Error(`portal did not become healthy within ${timeoutMs} ms: ${output()}`)
}

export async function killPortal(portal: PortalProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (portal.child.exitCode !== null || portal.child.signalCode !== null) return
  const exited = new Promise((resolve) => portal.child.once('exit', resolve))
  portal.child.kill(signal)
  await exited
}

/** Runs a `portal` CLI command (`org create`, `token create`, …) as an operator would and returns what it printed, trimmed. */
export async function runPortalCli(env: Record<string, string>, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [PORTAL_BIN, ...args], { env: { ...process.env, LOG_LEVEL: 'warn', ...env } }, (error, stdout, stderr) => {
      if (error) reject(new Error(`portal ${args.join(' ')}: ${error.message}\n${stderr}`))
      else resolve(stdout.trim())
    })
  })
}
