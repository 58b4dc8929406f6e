import { useEffect, useRef } from 'preact/hooks'
import './investigation.css'

/**
 * Keyboard shortcuts, as Sentry's and Gmail's users know them: j/k move through the rows of a list (focusing the
 * row's first link, so Enter opens it), e or r resolves and i ignores (the current row's group on the errors
 * stream, the group on its page), a assigns the group on its page, / goes to the search field and ? lists them. Keys typed into a field stay
 * the field's.
 */
const SHORTCUTS: [keys: string, what: string][] = [
  ['j / k', 'next / previous row of the list'],
  ['Enter', 'open the current row'],
  ['e or r', 'resolve the group (the current row’s on the errors stream)'],
  ['i', 'ignore the group'],
  ['a', 'assign the group (on its page)'],
  ['/', 'search'],
  ['?', 'show or hide this list'],
]

function typingIn(target: EventTarget | null): boolean {
  const element = target as HTMLElement | null
  return !!element && (element.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(element.tagName))
}

function rows(): HTMLTableRowElement[] {
  return [...document.querySelectorAll<HTMLTableRowElement>('main table tbody tr')].filter((row) => row.querySelector('a[href]'))
}

function currentRow(): HTMLTableRowElement | null {
  return (document.activeElement?.closest('main table tbody tr') as HTMLTableRowElement | null) ?? document.querySelector('main tr.kbd-current')
}

function moveRow(step: 1 | -1) {
  const all = rows()
  if (all.length === 0) return
  const at = all.indexOf(currentRow() as HTMLTableRowElement)
  const next = all[at === -1 ? (step === 1 ? 0 : all.length - 1) : Math.min(Math.max(at + step, 0), all.length - 1)]
  for (const row of all) row.classList.toggle('kbd-current', row === next)
  next.querySelector<HTMLAnchorElement>('a[href]')!.focus()
  next.scrollIntoView({ block: 'nearest' })
}

/** A button of the page by its text, within `scope` (the triage group on a group page, the bulk bar on the stream). */
function pressButton(scope: string, label: string): boolean {
  const button = [...document.querySelectorAll<HTMLButtonElement>(`${scope} button`)].find((found) => found.textContent?.trim() === label && !found.disabled)
  button?.click()
  return !!button
}

function triage(status: 'Resolve' | 'Ignore') {
  if (pressButton('[aria-label="Triage"]', status)) return
  const row = currentRow()
  const box = row?.querySelector<HTMLInputElement>('input[type="checkbox"]')
  if (!box) return
  // On the stream: the current row alone is selected, then triaged with the bulk action.
  for (const other of document.querySelectorAll<HTMLInputElement>('main table tbody input[type="checkbox"]:checked')) if (other !== box) other.click()
  if (!box.checked) box.click()
  setTimeout(() => pressButton('[aria-label="Selected groups"]', `${status} selected`), 0)
}

export function KeyboardShortcuts() {
  const overlay = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey || typingIn(event.target)) return
      const act: Record<string, () => void> = {
        j: () => moveRow(1),
        k: () => moveRow(-1),
        e: () => triage('Resolve'),
        r: () => triage('Resolve'),
        i: () => triage('Ignore'),
        a: () => document.querySelector<HTMLInputElement>('[aria-label="Assignee"] input[name="assignee"]')?.focus(),
        '/': () => document.querySelector<HTMLInputElement>('main .filters input:not([type="checkbox"]), main input[type="search"]')?.focus(),
        '?': () => (overlay.current?.open ? overlay.current.close() : overlay.current?.showModal()),
      }
      const action = act[event.key]
      if (!action) return
      event.preventDefault()
      action()
    }
    document.addEventListener('keydown', onKey)
    return () => document.removeEventListener('keydown', onKey)
  }, [])
  return (
    <dialog ref={overlay} class="kbd-overlay" aria-label="Keyboard shortcuts">
      <h2>Keyboard shortcuts</h2>
      {/* a list, not a table: the pages' own tables stay the only ones */}
      <dl>
        {SHORTCUTS.map(([keys, what]) => (
          <>
            <dt>
              <kbd>{keys}</kbd>
            </dt>
            <dd>{what}</dd>
          </>
        ))}
      </dl>
      <p class="actions">
        <button type="button" onClick={() => overlay.current?.close()}>
          Close
        </button>
      </p>
    </dialog>
  )
}
