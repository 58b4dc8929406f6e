/** Watches the event loop from now on: `stop()` gives its longest pause, in ms, a tick every `everyMs` being no pause. */
export function watchEventLoop(everyMs: number) {
  let last = performance.now()
  let longest = 0
  const ticker = setInterval(() => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
  }, everyMs)
  return {
    stop(): number {
      clearInterval(ticker)
      return Math.max(longest, performance.now() - last)
    },
  }
}
