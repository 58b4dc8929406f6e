import type { IngestBatch } from './write-batches.ts'

/**
 * A batch as it crosses to the writer's thread: each field one string or typed array, not an object per event.
 * A message is copied value by value, and 100 events' objects took a sixth of the event loop's time at full ingest.
 */
export interface PackedBatch extends Omit<IngestBatch, 'accepted'> {
  /** the events' types, space-separated */
  types: string
  /** the events' ids, space-separated */
  ids: string
  ts: Float64Array
  receivedAt: Float64Array
  /** the events' payloads as the JSON text they are stored as, one a line (JSON.stringify writes no raw newline) */
  dataJson: string
}

export function packBatch({ accepted, ...batch }: IngestBatch): PackedBatch {
  const [types, ids, dataJson] = [new Array<string>(accepted.length), new Array<string>(accepted.length), new Array<string>(accepted.length)]
  const [ts, receivedAt] = [new Float64Array(accepted.length), new Float64Array(accepted.length)]
  accepted.forEach(({ module, event, dataJson: json }, index) => {
    types[index] = module.type
    ids[index] = event.id
    ts[index] = event.ts
    receivedAt[index] = event.receivedAt
    dataJson[index] = json
  })
  return { ...batch, types: types.join(' '), ids: ids.join(' '), ts, receivedAt, dataJson: dataJson.join('\n') }
}

/** The writer thread's end of `packBatch`: the events, in batch order. */
export function unpackBatch(batch: PackedBatch): { type: string; id: string; ts: number; receivedAt: number; dataJson: string }[] {
  // an all-rejected batch still carries its idempotency record, and ''.split(' ') is one empty type
  if (batch.ts.length === 0) return []
  const [types, ids, dataJson] = [batch.types.split(' '), batch.ids.split(' '), batch.dataJson.split('\n')]
  return types.map((type, index) => ({ type, id: ids[index], ts: batch.ts[index], receivedAt: batch.receivedAt[index], dataJson: dataJson[index] }))
}
