import { Agent, request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Service } from './service.ts'

/** A new book sent: when, when and how it was answered, and the id it was given. */
export interface Write {
  title: string
  sentAt: number
  answeredAt?: number
  status?: number
  id?: number
}

/**
 * Sends `rate` new books a second to `service`, each on time whatever became of the ones before,
 * until stopped: the `n`th titled `title(n)`, by `author`.
 */
export function steadyWrites(
  service: Service,
  token: string,
  rate: number,
  { title, author }: { title: (n: number) => string; author: string },
) {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 })
  const writes: Write[] = []
  let stopped = false
  const send = (n: number) => {
    const write: Write = { title: title(n), sentAt: performance.now() }
    writes.push(write)
    const body = JSON.stringify({ title: write.title, author, year: 2026 })
    const req = request(`${service.baseUrl}/book`, { method: 'POST', agent, headers: { authorization: token } }, (res) => {
      let text = ''
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => {
        write.answeredAt = performance.now()
        write.status = res.statusCode!
        if (write.status === 201) write.id = (JSON.parse(text) as { data: { id: number } }).data.id
      })
    })
    req.on('error', () => (write.status = 0))
    req.end(body)
  }
  const pacing = (async () => {
    const start = performance.now()
    for (let n = 0; !stopped; n++) {
      const wait = start + (n * 1000) / rate - performance.now()
      if (wait > 0) await sleep(wait)
      send(n)
    }
  })()
  return {
    writes,
    async stop() {
      stopped = true
      await pacing
      const deadline = performance.now() + 10_000
      while (writes.some((write) => write.status === undefined) && performance.now() < deadline) await sleep(50)
      agent.destroy()
    },
  }
}
