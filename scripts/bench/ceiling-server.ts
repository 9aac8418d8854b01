import { createServer } from 'node:http'

/**
 * The ceiling: a bare node:http server that answers every request with the bytes of one
 * recorded response (status, headers, body), with no routing, auth or store.
 */
interface RecordedResponse {
  status: number
  rawHeaders: string[]
  body: string
}

const recorded = JSON.parse(process.env.BENCH_RESPONSE ?? '') as RecordedResponse
// A string, as the service writes its JSON: node:http then sends headers and body in one write,
// where a Buffer body takes a writev of two, which costs the ceiling about 7 µs more per request.
const body = Buffer.from(recorded.body, 'base64').toString('utf8')

createServer((request, response) => {
  // Requests carry no body worth reading, but it is drained so keep-alive goes on.
  request.resume()
  response.writeHead(recorded.status, recorded.rawHeaders)
  response.end(body)
}).listen(0, '127.0.0.1')
