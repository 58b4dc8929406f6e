import type { EventRow } from '../module.ts'

/** Row types of the logs module's tables, as its migrations leave them. */
export interface LogTables {
  log_events: EventRow & { level: string | null; module: string | null; message: string }
  /** per project, hour and level, spread over LEVEL_COUNT_SHARDS rows (logs/003) */
  log_level_hours: { project_id: string; hour: number; level_key: string; shard: number; level: string | null; events: number }
  /** per project, minute (`ts`, its first millisecond) and level, spread over the same shards (logs/004) */
  log_level_minutes: { project_id: string; ts: number; level_key: string; shard: number; level: string | null; events: number }
  /** projects that had logs before the minute counts began, and the first minute counted (logs/004) */
  log_level_minutes_since: { project_id: string; since: number }
}
