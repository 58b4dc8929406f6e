import type { CaptureContext } from './capture.js'

interface Capturing {
  captureException(thrown: unknown, context?: CaptureContext): Promise<unknown>
  close(): Promise<void>
}

/**
 * Listens for `uncaughtException` and `unhandledRejection`; on either, captures it, flushes the queue
 * (both bounded by `shutdownTimeoutMs`), prints the error as Node would, and exits with code 1, which
 * is what Node 20 does with both when nobody listens. Returns how to stop listening.
 */
export function installProcessHooks(client: Capturing, shutdownTimeoutMs: number): () => void {
  let exiting = false
  const captureAndExit = async (thrown: unknown, mechanism: 'uncaughtException' | 'unhandledRejection') => {
    // A second failure while the first is being reported must not start a second shutdown.
    if (exiting) return
    exiting = true
    const report = client.captureException(thrown, { handled: false, mechanism }).then(() => client.close())
    await Promise.race([report, new Promise((resolve) => setTimeout(resolve, shutdownTimeoutMs))])
    process.stderr.write(`${thrown instanceof Error ? (thrown.stack ?? String(thrown)) : `Uncaught ${String(thrown)}`}\n`)
    process.exit(1)
  }
  const onException = (error: Error) => void captureAndExit(error, 'uncaughtException')
  const onRejection = (reason: unknown) => void captureAndExit(reason, 'unhandledRejection')
  process.on('uncaughtException', onException)
  process.on('unhandledRejection', onRejection)
  return () => {
    process.off('uncaughtException', onException)
    process.off('unhandledRejection', onRejection)
  }
}
