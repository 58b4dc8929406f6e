/** A unified diff with added, removed and hunk lines marked, as a code review shows it; no colour is the only cue (signs stay). */
export function Diff({ text }: { text: string | null | undefined }) {
  if (!text) return <p class="muted">No diff was sent with this change.</p>
  return (
    <pre class="diff" aria-label="Unified diff">
      {text.split('\n').map((line) => (
        <span class={diffClass(line)}>
          {line}
          {'\n'}
        </span>
      ))}
    </pre>
  )
}

function diffClass(line: string): string {
  if (line.startsWith('+++') || line.startsWith('---')) return 'diff-file'
  if (line.startsWith('@@')) return 'diff-hunk'
  if (line.startsWith('+')) return 'diff-add'
  if (line.startsWith('-')) return 'diff-del'
  return 'diff-context'
}
