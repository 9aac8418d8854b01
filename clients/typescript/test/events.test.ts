import assert from 'node:assert/strict'
import { it } from 'node:test'
import { serverSentEvents, type EventStreamItem } from '../src/events.ts'

/** A body that arrives in these pieces. */
function body(...pieces: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(new TextEncoder().encode(piece))
      controller.close()
    },
  })
}

async function all(stream: ReadableStream<Uint8Array>): Promise<EventStreamItem[]> {
  const items: EventStreamItem[] = []
  for await (const item of serverSentEvents(stream)) items.push(item)
  return items
}

it('reads events, however the body is cut, skipping comments, with their last id', async () => {
  const text =
    ': changes after 1\n\nid: 2\nevent: change\ndata: {"seq":2}\n\n:\n\ndata: first\r\ndata: second\r\n\r\nid: 3\ndata:{"seq":3}\n\nretry: 1000\n\n'
  const whole = await all(body(text))
  assert.deepEqual(whole, [
    { event: { id: '2', event: 'change', data: '{"seq":2}' } },
    { event: { id: '2', event: 'message', data: 'first\nsecond' } },
    { event: { id: '3', event: 'message', data: '{"seq":3}' } },
    { retry: 1000 },
  ])
  assert.deepEqual(await all(body(...text.split(''))), whole)
  assert.deepEqual(await all(body('\ufeffdata: x\n\ndata: cut short')), [{ event: { id: undefined, event: 'message', data: 'x' } }])
})
