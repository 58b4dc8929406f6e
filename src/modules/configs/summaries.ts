import type { GroupSummary } from '../module.ts'

/** Per configuration path: its latest change, and its changes per hour (the reads' and the alert signal's). */
export const configPathSummary: GroupSummary & { hours: string } = { table: 'config_path_summary', columns: ['path'], hours: 'config_path_hours' }
