import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import ts from 'typescript'

const SRC = path.resolve(import.meta.dirname, '../src')

type ImportGraph = Map<string, string[]>

/** Each source file of src/ (tests aside), by its path in src/, with the files of src/ it imports: `import type` and `import()` too. */
function importGraph(): ImportGraph {
  const files = fs.readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
  return new Map(
    files.map((file) => {
      const { importedFiles } = ts.preProcessFile(fs.readFileSync(path.join(SRC, file), 'utf8'), true, true)
      const relative = importedFiles.map(({ fileName }) => fileName).filter((specifier) => specifier.startsWith('.'))
      return [file, relative.map((specifier) => path.relative(SRC, path.resolve(SRC, path.dirname(file), specifier)))]
    }),
  )
}

/**
 * The folder a file of src/ counts in: its own, at any depth (`storage/sqlite` is apart from `storage`). A file at the top
 * of src/ counts as a folder of its own: those files (`config.ts`, `context.ts`, …) are what the folders stand on, not one feature.
 */
const folderOf = (file: string) => (path.dirname(file) === '.' ? file : path.dirname(file))

/** The strongly connected components of more than one file (Tarjan): every set of files that import each other round a circle. */
function importCircles(graph: ImportGraph): string[][] {
  const order = new Map<string, number>()
  const lowest = new Map<string, number>()
  const stack: string[] = []
  const circles: string[][] = []
  const visit = (file: string) => {
    order.set(file, order.size)
    lowest.set(file, order.get(file)!)
    stack.push(file)
    for (const imported of graph.get(file) ?? []) {
      if (!graph.has(imported)) continue
      if (!order.has(imported)) visit(imported)
      if (stack.includes(imported)) lowest.set(file, Math.min(lowest.get(file)!, lowest.get(imported)!))
    }
    if (lowest.get(file) !== order.get(file)) return
    const circle = stack.splice(stack.indexOf(file))
    if (circle.length > 1) circles.push(circle)
  }
  for (const file of graph.keys()) if (!order.has(file)) visit(file)
  return circles
}

/** One circle through files of different folders, as `a → b → … → a`, for a failure to name: the shortest back from an import that crosses folders. */
function crossingCircle(graph: ImportGraph, files: string[]): string {
  const inCircle = new Set(files)
  for (const from of files) {
    for (const to of graph.get(from)!.filter((file) => inCircle.has(file) && folderOf(file) !== folderOf(from))) {
      const cameFrom = new Map([[to, '']])
      for (const file of cameFrom.keys()) {
        for (const next of graph.get(file)!.filter((imported) => inCircle.has(imported) && !cameFrom.has(imported))) cameFrom.set(next, file)
        if (!cameFrom.has(from)) continue
        const route = [from]
        while (route[0] !== to) route.unshift(cameFrom.get(route[0])!)
        return [from, ...route].join(' → ')
      }
    }
  }
  return files.join(', ')
}

function circlesAcrossFolders(graph: ImportGraph): string[] {
  return importCircles(graph)
    .filter((files) => new Set(files.map(folderOf)).size > 1)
    .map((files) => `${files.length} files in ${[...new Set(files.map(folderOf))].sort().join(', ')}: ${crossingCircle(graph, files)}`)
}

describe('the import graph of src/', () => {
  const graph = importGraph()

  test('has no import circle through more than one folder of src/ at any depth (or file at its top), type imports included', () => {
    assert.deepEqual(circlesAcrossFolders(graph), [])
  })

  test('holds every relative import of src/, type-only ones too, each naming a file that exists', () => {
    assert.ok(graph.get('context.ts')!.includes('config.ts'), "context.ts's `import type { Config }`")
    const missing = [...graph].flatMap(([file, imports]) => imports.filter((imported) => !fs.existsSync(path.join(SRC, imported))).map((imported) => `${file} → ${imported}`))
    assert.deepEqual(missing, [])
  })

  test('finds a circle through folders at any depth or files at the top of src/, and lets one inside a folder be', () => {
    const sample = new Map([
      ['config.ts', ['modules/registry.ts']],
      ['modules/registry.ts', ['modules/logs/module.ts']],
      ['modules/logs/module.ts', ['context.ts', 'modules/registry.ts']],
      ['context.ts', ['config.ts']],
      ['storage/storage.ts', ['storage/sqlite/sqlite-storage.ts']],
      ['storage/sqlite/sqlite-storage.ts', ['storage/storage.ts']],
      ['errors/fingerprint.ts', ['errors/fingerprint-v1.ts']],
      ['errors/fingerprint-v1.ts', ['errors/fingerprint.ts']],
      ['ids.ts', ['startup.ts']],
      ['startup.ts', ['ids.ts']],
    ])
    assert.deepEqual(circlesAcrossFolders(sample), [
      '4 files in config.ts, context.ts, modules, modules/logs: config.ts → modules/registry.ts → modules/logs/module.ts → context.ts → config.ts',
      '2 files in storage, storage/sqlite: storage/storage.ts → storage/sqlite/sqlite-storage.ts → storage/storage.ts',
      '2 files in ids.ts, startup.ts: ids.ts → startup.ts → ids.ts',
    ])
  })
})

test('better-sqlite3 is loaded only through src/storage/sqlite/better-sqlite3.ts, which picks the build this Node.js can run', () => {
  // Loading the package by its own name gives 13, which crashes Node 20 (and a test that did so ended in a segfault).
  const root = path.resolve(import.meta.dirname, '..')
  const driver = path.join('src', 'storage', 'sqlite', 'better-sqlite3.ts')
  const loads = /(?<!import type \w+ )from 'better-sqlite3'|(?:import|require)\('better-sqlite3'\)/
  const offenders = ['src', 'test', 'bench', 'sdk']
    .flatMap((folder) => fs.readdirSync(path.join(root, folder), { recursive: true, encoding: 'utf8' }).map((file) => path.join(folder, file)))
    .filter((file) => file.endsWith('.ts') && file !== driver && file !== path.join('test', 'architecture.test.ts') && !file.includes('node_modules') && loads.test(fs.readFileSync(path.join(root, file), 'utf8')))
  assert.deepEqual(offenders, [])
})

