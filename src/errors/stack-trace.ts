/** One stack frame, innermost (the frame that threw) first, as V8 and the JVM print them. */
export interface Frame {
  function: string | null
  /** a module or class name when the runtime gives one (JVM class, Python module) */
  module: string | null
  /** the file path or URL as printed */
  filename: string | null
  lineno: number | null
  colno: number | null
  inApp: boolean
}

type ParsedFrame = Omit<Frame, 'inApp'>

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
  if (text.includes('File "') && lines.some((line) => PYTHON_CALL.test(line))) return pythonFrames(lines).map(withInApp)
  const frames: ParsedFrame[] = []
  for (const line of lines) {
    const start = line.trimStart()
    if (start.startsWith('Caused by:')) break
    const frame = start.startsWith('at ') ? atFrame(line, start) : start.includes('@') ? geckoFrame(line) : undefined
    if (frame) frames.push(frame)
  }
  return frames.map(withInApp)
}

function pythonFrames(lines: string[]): ParsedFrame[] {
  let frames: ParsedFrame[] = []
  for (const line of lines) {
    if (/^\s*Traceback \(most recent call last\):/.test(line)) frames = []
    const match = PYTHON_CALL.exec(line)
    if (match) frames.push({ function: match[3], module: null, filename: match[1], lineno: Number(match[2]), colno: null })
  }
  // Python prints the most recent call last.
  return frames.reverse()
}

/** An `at …` line: V8 when its call has a space before the parenthesis (`fn (file:1:2)`), which a JVM frame never has. */
function atFrame(line: string, start: string): ParsedFrame | undefined {
  const parenthesis = start.indexOf('(')
  if (parenthesis > 0 && start[parenthesis - 1] === ' ') return v8Frame(line)
  return jvmFrame(line) ?? v8Frame(line)
}

function jvmFrame(line: string): ParsedFrame | undefined {
  const match = JVM_CALL.exec(line)
  if (!match) return undefined
  const location = /^(.*?):(\d+)$/.exec(match[3])
  return {
    function: match[2],
    module: match[1],
    filename: location ? location[1] : null,
    lineno: location ? Number(location[2]) : null,
    colno: null,
  }
}

function v8Frame(line: string): ParsedFrame | undefined {
  const call = V8_CALL.exec(line)
  if (call) return { function: call[1], module: null, ...v8Location(call[2]) }
  const bare = V8_BARE.exec(line)
  return bare ? { function: null, module: null, ...v8Location(bare[1]) } : undefined
}

function v8Location(text: string): Pick<Frame, 'filename' | 'lineno' | 'colno'> {
  const evalSite = text.startsWith('eval at ') ? EVAL_SITE.exec(text) : null
  const location = LOCATION.exec(evalSite ? evalSite[1] : text)
  if (!location) return { filename: text === 'native' || text.startsWith('index ') ? null : text, lineno: null, colno: null }
  return { filename: location[1], lineno: Number(location[2]), colno: location[3] === undefined ? null : Number(location[3]) }
}

function geckoFrame(line: string): ParsedFrame | undefined {
  const match = GECKO_CALL.exec(line)
  if (!match) return undefined
  return { function: match[1] || null, module: null, filename: match[2], lineno: Number(match[3]), colno: match[4] === undefined ? null : Number(match[4]) }
}

function withInApp(frame: ParsedFrame): Frame {
  return { function: frame.function, module: frame.module, filename: frame.filename, lineno: frame.lineno, colno: frame.colno, inApp: isInApp(frame) }
}

const LIBRARY_FOLDERS = ['/node_modules/', '/site-packages/', '/dist-packages/']
// Runtimes and the libraries most JVM services carry; their frames say where, not which bug.
const JVM_LIBRARY_PACKAGES = /^(java|javax|jdk|sun|com\.sun|kotlin|kotlinx|scala|groovy|org\.springframework|org\.apache|org\.hibernate|io\.netty|reactor|com\.google|com\.fasterxml)\./

/** Library and runtime frames are not in-app: node_modules, site-packages, Node internals, the Python and JVM standard libraries. */
export function isInApp(frame: Pick<Frame, 'module' | 'filename'>): boolean {
  const file = frame.filename?.includes('\\') ? frame.filename.replace(/\\/g, '/') : (frame.filename ?? '')
  if (frame.module && JVM_LIBRARY_PACKAGES.test(frame.module)) return false
  if (LIBRARY_FOLDERS.some((folder) => file.includes(folder))) return false
  if (file.startsWith('node:') || file.startsWith('internal/') || (file.startsWith('<') && file.endsWith('>'))) return false
  if (file.includes('/lib/python') && /\/lib\/python\d[\d.]*\//.test(file)) return false
  return file !== '' || frame.module !== null
}
