import { modules } from '../modules/registry.ts'
import type { AlertSignal } from './signal.ts'

/** Every signal of every module, in registry order: the one list, read from the registry each time. */
export function alertSignals(): AlertSignal[] {
  return modules.flatMap((module) => module.signals ?? [])
}

export function findSignal(name: string): AlertSignal | undefined {
  return alertSignals().find((signal) => signal.name === name)
}
