/** An event serialised when it was queued: later changes to the caller's object do not change what is sent. */
export interface QueuedEvent {
  /** position in the order of `send` calls, so that `flush()` knows what was queued before it */
  seq: number
  json: string
  bytes: number
}

/** `{"events":[` and `]}` around the events of a batch. */
export const ENVELOPE_BYTES = 13

export function batchBody(events: readonly QueuedEvent[]): string {
  return `{"events":[${events.map((event) => event.json).join(',')}]}`
}

/**
 * Events waiting for a batch, oldest first, at most `capacity` of them. When full, the OLDEST waiting
 * event is dropped to make room: during an outage the queue keeps the most recent picture of the
 * system, which is what a person triaging it looks at first.
 */
export class EventQueue {
  private events: QueuedEvent[] = []
  private head = 0
  private bytes = 0

  constructor(private readonly capacity: number) {}

  get length(): number {
    return this.events.length - this.head
  }

  /** the bytes a body of every waiting event would take */
  get byteLength(): number {
    return this.length === 0 ? 0 : this.bytes + ENVELOPE_BYTES + this.length - 1
  }

  /** the sequence number of the oldest waiting event */
  get oldestSeq(): number | undefined {
    return this.events[this.head]?.seq
  }

  /** Adds an event; returns the event dropped to make room, if one was. */
  push(event: QueuedEvent): QueuedEvent | undefined {
    const dropped = this.length >= this.capacity ? this.shift() : undefined
    this.events.push(event)
    this.bytes += event.bytes
    return dropped
  }

  /** Removes and returns the oldest events that fit in one batch of at most `maxEvents` and `maxBytes`. */
  takeBatch(maxEvents: number, maxBytes: number): QueuedEvent[] {
    const batch: QueuedEvent[] = []
    let bytes = ENVELOPE_BYTES - 1
    while (this.length > 0 && batch.length < maxEvents) {
      const next = this.events[this.head]
      if (batch.length > 0 && bytes + 1 + next.bytes > maxBytes) break
      bytes += 1 + next.bytes
      batch.push(this.shift()!)
    }
    return batch
  }

  /** Removes every waiting event. */
  clear(): QueuedEvent[] {
    const all = this.events.slice(this.head)
    this.events = []
    this.head = 0
    this.bytes = 0
    return all
  }

  private shift(): QueuedEvent | undefined {
    const event = this.events[this.head]
    if (event === undefined) return undefined
    this.head += 1
    this.bytes -= event.bytes
    // Compact now and then instead of shifting the array on every take.
    if (this.head > 1024 && this.head * 2 > this.events.length) {
      this.events = this.events.slice(this.head)
      this.head = 0
    }
    return event
  }
}
