/**
 * The module event tables as of the first event-store layout change, frozen: layout migrations that
 * rework every event table name them from here, never from the registry of the day.
 */
export const EVENT_TABLES_V1 = [
  'audit_events',
  'config_events',
  'cost_events',
  'deploy_events',
  'error_events',
  'feature_flag_events',
  'log_events',
  'performance_events',
  'repository_events',
  'tenant_events',
  'trace_events',
  'video_events',
  'webhook_events',
]
