import { isoTime } from '../ids.ts'
import { registerChangeSource } from '../changes/sources.ts'
import { alertDb } from './tables.ts'

/**
 * An alert that began or stopped firing is a change like a deploy: a chart that shows a jump shows beside it
 * when the alert about it fired. Pending and error transitions are left out: they are not news to a reader.
 */
registerChangeSource({
  kind: 'alert',
  async read(ctx, window) {
    const rows = await alertDb(ctx.storage)
      .selectFrom('alert_history')
      .select(['id', 'rule_id', 'rule_name', 'series', 'to_state', 'severity', 'at'])
      .where('project_id', '=', window.projectId)
      .where('at', '>=', window.fromMs)
      .where('at', '<', window.toMs)
      .where('to_state', 'in', ['firing', 'resolved'])
      .orderBy('at', 'desc')
      .orderBy('id', 'desc')
      .limit(window.limit)
      .execute()
    return rows.map((row) => ({
      kind: 'alert',
      eventType: 'alert',
      eventId: row.id,
      ts: isoTime(Number(row.at))!,
      title: `${row.rule_name}${row.series ? ` (${row.series})` : ''} ${row.to_state === 'firing' ? `firing${row.severity ? `, ${row.severity}` : ''}` : 'resolved'}`,
      subject: row.rule_id,
      service: null,
      environment: null,
      actor: null,
      commit: null,
    }))
  },
})
