/** One stack frame, innermost (the frame that threw) first, as V8 and the JVM print them. */
export interface Frame {
  function: string | null
  /** a module or class name when the runtime gives one (JVM class, Python module) */
  module: string | null
  /** the file path or URL as printed */
  filename: string | null
  /** the absolute path or URL when the source gives it beside a shorter `filename` (Sentry's `abs_path`) */
  absPath?: string | null
  lineno: number | null
  colno: number | null
  inApp: boolean
}

// V8: `at fn (file:1:2)`, `at async fn (file:1:2)`, `at new Foo (file:1:2)`, `at file:1:2`.
const V8_CALL = /^\s*at (?:async )?(?:new )?(.+?) \((.*)\)\s*$/
const V8_BARE = /^\s*at (?:async )?(\S.*?)\s*$/
// JVM: `at com.acme.Users.load(Users.java:42)`, `at java.base/java.lang.Thread.run(Thread.java:833)`.
const JVM_CALL = /^\s*at (?:[^\s/()]+\/+)*([^\s/()]+)\.([^\s.()]+)\(([^()]*)\)\s*$/
// Python: `  File "/srv/app/users.py", line 42, in load_user`.
const PYTHON_CALL = /^\s*File "(.+)", line (\d+), in (.+?)\s*$/
// SpiderMonkey and JavaScriptCore: `fn@https://cdn.example.com/app.js:1:2`.
const GECKO_CALL = /^\s*([^\s@]*)@(\S+?):(\d+)(?::(\d+))?\s*$/
const LOCATION = /^(.*?):(\d+)(?::(\d+))?$/
// `eval at fn (file:1:2), <anonymous>:3:4`: the eval's call site is the place in a file.
const EVAL_SITE = /^eval at .*?\((.*?:\d+(?::\d+)?)\)/

/**
 * Frames of a stack trace printed by V8/Node, CPython or the JVM (SpiderMonkey and JavaScriptCore
 * too), innermost first. Lines that are not frames (the exception line, source excerpts,
 * `... 5 more`) are skipped. Of chained exceptions, the frames of the one reported are kept:
 * the last traceback in Python, the first block before `Caused by:` on the JVM.
 */
export function parseStackTrace(text: string): Frame[] {
  // Split on \n alone: every pattern below allows trailing whitespace, a \r included.
  const lines = text.split('\n')
  if (text.includes('File "') && lines.some((line) => PYTHON_CALL.test(line))) return pythonFrames(lines)
  // `.` in the patterns stops at a line terminator, which scanV8Call does not look for.
  const scannable = !text.includes('\r') && !text.includes('\u2028') && !text.includes('\u2029')
  const frames: Frame[] = []
  for (const line of lines) {
    const start = line.trimStart()
    if (start.startsWith('Caused by:')) break
    const frame = start.startsWith('at ') ? atFrame(line, start, scannable) : start.includes('@') ? geckoFrame(line) : undefined
    if (frame) frames.push(frame)
  }
  return frames
}

function pythonFrames(lines: string[]): Frame[] {
  let frames: Frame[] = []
  for (const line of lines) {
    if (/^\s*Traceback \(most recent call last\):/.test(line)) frames = []
    const match = PYTHON_CALL.exec(line)
    if (match) frames.push(frameOf(match[3], null, match[1], Number(match[2]), null))
  }
  // Python prints the most recent call last.
  return frames.reverse()
}

/** An `at …` line: V8 when its call has a space before the parenthesis (`fn (file:1:2)`), which a JVM frame never has. */
function atFrame(line: string, start: string, scannable: boolean): Frame | undefined {
  const parenthesis = start.indexOf('(')
  if (parenthesis > 0 && start[parenthesis - 1] === ' ') return (scannable ? scanV8Call(start) : undefined) ?? v8Frame(line)
  return jvmFrame(line) ?? v8Frame(line)
}

function jvmFrame(line: string): Frame | undefined {
  const match = JVM_CALL.exec(line)
  if (!match) return undefined
  const location = /^(.*?):(\d+)$/.exec(match[3])
  return frameOf(match[2], match[1], location ? location[1] : null, location ? Number(location[2]) : null, null)
}

/** A V8 frame by the patterns, which define what a V8 line is; scanV8Call agrees with them wherever it answers. */
export function v8Frame(line: string): Frame | undefined {
  const call = V8_CALL.exec(line)
  const [fn, text] = call ? [call[1], call[2]] : [null, V8_BARE.exec(line)?.[1]]
  if (text === undefined) return undefined
  const evalSite = text.startsWith('eval at ') ? EVAL_SITE.exec(text) : null
  const location = LOCATION.exec(evalSite ? evalSite[1] : text)
  if (!location) return frameOf(fn, null, unlocated(text), null, null)
  return frameOf(fn, null, location[1], Number(location[2]), location[3] === undefined ? null : Number(location[3]))
}

/**
 * The usual V8 line, `at [async ][new ]fn (file:line:col)` ending at its `)`, read by index as
 * V8_CALL and LOCATION match it, for less than they cost: every capture parses some 20 of them.
 * Undefined for a line it does not take (anything after the `)`, an eval site), which the patterns
 * then read. `start` is the line without its leading white space, so it begins with `at `, and the
 * stack holds no line terminator that `.` would stop at.
 */
export function scanV8Call(start: string): Frame | undefined {
  if (start.charCodeAt(start.length - 1) !== CLOSE_PARENTHESIS) return undefined
  let from = 'at '.length
  if (start.startsWith('async ', from)) from += 'async '.length
  if (start.startsWith('new ', from)) from += 'new '.length
  // The first ` (` after at least one character of name, where the lazy `(.+?) \(` stops, with the
  // prefixes taken, as the pattern tries first. With none there, the pattern backtracks: not ours.
  const open = start.indexOf(' (', from + 1)
  if (open < 0) return undefined
  const fn = start.slice(from, open)
  const text = start.slice(open + 2, -1)
  if (text.startsWith('eval at ')) return undefined
  // LOCATION: the earliest `:` whose tail is `line` or `line:col`, found from the end (V8's
  // lastIndexOf is a runtime call that costs more than this loop).
  const last = colonBeforeDigits(text, text.length)
  if (last < 0) return frameOf(fn, null, unlocated(text), null, null)
  const before = colonBeforeDigits(text, last)
  if (before >= 0) return frameOf(fn, null, text.slice(0, before), Number(text.slice(before + 1, last)), Number(text.slice(last + 1)))
  return frameOf(fn, null, text.slice(0, last), Number(text.slice(last + 1)), null)
}

/** The index of the `:` that one or more ASCII digits (`\d+`) ending at `end` follow, or -1. */
function colonBeforeDigits(text: string, end: number): number {
  let index = end - 1
  while (index >= 0 && isDigit(text.charCodeAt(index))) index--
  return index < end - 1 && index >= 0 && text.charCodeAt(index) === COLON ? index : -1
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57
}

const CLOSE_PARENTHESIS = 41
const COLON = 58

/** The file of a location without a line number: none for `native` and `index 0` (Promise.all's), else as printed. */
function unlocated(text: string): string | null {
  return text === 'native' || text.startsWith('index ') ? null : text
}

function geckoFrame(line: string): Frame | undefined {
  const match = GECKO_CALL.exec(line)
  if (!match) return undefined
  return frameOf(match[1] || null, null, match[2], Number(match[3]), match[4] === undefined ? null : Number(match[4]))
}

function frameOf(fn: string | null, module: string | null, filename: string | null, lineno: number | null, colno: number | null): Frame {
  return { function: fn, module, filename, lineno, colno, inApp: isInApp({ module, filename }) }
}

const LIBRARY_FOLDER = /\/(?:node_modules|site-packages|dist-packages)\//
// Runtimes and the libraries most JVM services carry; their frames say where, not which bug.
const JVM_LIBRARY_PACKAGES = /^(java|javax|jdk|sun|com\.sun|kotlin|kotlinx|scala|groovy|org\.springframework|org\.apache|org\.hibernate|io\.netty|reactor|com\.google|com\.fasterxml)\./

/** Library and runtime frames are not in-app: node_modules, site-packages, Node internals, the Python and JVM standard libraries. */
export function isInApp(frame: Pick<Frame, 'module' | 'filename'>): boolean {
  const file = frame.filename?.includes('\\') ? frame.filename.replace(/\\/g, '/') : (frame.filename ?? '')
  if (frame.module && JVM_LIBRARY_PACKAGES.test(frame.module)) return false
  if (LIBRARY_FOLDER.test(file)) return false
  if (file.startsWith('node:') || file.startsWith('internal/') || (file.startsWith('<') && file.endsWith('>'))) return false
  if (file.includes('/lib/python') && /\/lib\/python\d[\d.]*\//.test(file)) return false
  return file !== '' || frame.module !== null
}
