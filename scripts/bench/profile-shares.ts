/**
 * Where the CPU of a `--cpu-prof` profile went while the service answered requests, as shares
 * of the busy samples (neither idle nor loading modules). A sample belongs to the nearest frame
 * of the project or of a package on its stack; a sample that reached native code through Node's
 * own JavaScript belongs to Node (HTTP, sockets, the event loop), which is what the ceiling does
 * too. Native calls made straight from a frame (a SQLite statement, a regular expression) belong
 * to that frame.
 */
import { readFileSync } from 'node:fs'

interface CallFrame {
  functionName: string
  url: string
}
interface ProfileNode {
  id: number
  callFrame: CallFrame
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

const NODE = 'node:http, sockets, event loop'
const PACKAGES: [RegExp, string][] = [
  [/\/node_modules\/(pino|sonic-boom)\//, 'log lines (pino)'],
  [/\/node_modules\/fast-jwt\//, 'JWT (fast-jwt)'],
  [/\/node_modules\/pg[^/]*\//, 'the store: pg driver'],
  [/\/node_modules\/secure-json-parse\//, 'body parsing (secure-json-parse)'],
  [/\/node_modules\/(papaparse|csv-stringify|@streamparser)\//, 'import and export records (papaparse, csv-stringify, @streamparser/json)'],
  [/\/node_modules\/prom-client\//, "the service's own code"],
  [/\/node_modules\//, 'Fastify and its plugins'],
]

function owner(stack: CallFrame[]): string {
  const top = stack[0]!
  if (top.functionName === '(idle)') return 'idle'
  if (stack.some((frame) => frame.url.startsWith('node:internal/modules/') || frame.url.includes('amaro'))) return 'start-up'
  if (top.functionName === '(garbage collector)') return 'garbage collection'
  if (top.functionName === '(program)') return 'V8 and native, unattributed'
  let throughNode = false
  for (const { url } of stack) {
    if (url.startsWith('node:')) throughNode = true
    if (url === '' || url.startsWith('node:')) continue
    if (url.includes('/src/store/')) return 'the store: SQLite statements and commits, or its calls to pg'
    if (throughNode) return NODE
    const found = PACKAGES.find(([pattern]) => pattern.test(url))
    if (found) return found[1]
    if (url.includes('/src/')) return "the service's own code"
  }
  return NODE
}

/**
 * The pieces every request passes through, by the files that hold them. A sample belongs to the
 * innermost of these frames on its stack, whoever is on top (Fastify setting a header, pino
 * writing a line), unless a step of Fastify's lifecycle lies between: what the piece's own code
 * costs, not the framework's calling it or going on after it.
 */
const PIECES: [RegExp, string][] = [
  [/\/src\/http\/plugins\/security-headers\.ts$/, 'security headers'],
  [/\/src\/http\/plugins\/cors\.ts$/, 'CORS'],
  [/\/src\/http\/plugins\/cross-site\.ts$/, 'cross-site writes refused'],
  [/\/src\/http\/plugins\/request-id\.ts$/, 'request ids'],
  [/\/src\/http\/plugins\/body-parser\.ts$/, 'content types and JSON bodies'],
  [/\/src\/http\/plugins\/idempotency\.ts$/, 'idempotency keys'],
  [/\/src\/observability\/(request-tracing|metrics|series-histogram)\.ts$/, 'request tracing and metrics'],
  [/\/src\/store\/instrumented\.ts$/, "the store's timing"],
  [/\/src\/observability\/(request-logger|logger)\.ts$/, 'the logger'],
  [/\/src\/http\/wire\/(connection-limits|connections-per-address)\.ts$/, 'connection guards'],
  [/\/src\/http\/wire\/(request-bodies|under-way)\.ts$/, 'body-rate guard'],
  [/\/src\/http\/wire\/request-line\.ts$/, 'request line check'],
  [/\/src\/lifecycle\.ts$/, 'draining'],
  [/\/src\/auth\//, 'the token check'],
  [/\/src\/http\/errors\//, 'error answers'],
  [/\/src\/routes\//, 'the route'],
  [/\/src\/books\//, 'the catalogue'],
  [/\/src\/store\//, 'the store'],
]

/**
 * Fastify's request lifecycle: a hook that calls `done()` runs the rest of the request inside
 * its own frame, so what runs above such a frame is the framework's next step, not the hook's.
 */
const LIFECYCLE = /\/node_modules\/fastify\/lib\/(hooks|handle-request|route|content-type-parser|validation|wrap-thenable|reply)\.js$/
/** Reply methods a piece calls for itself (a header), unlike `send`, which starts the rest of the answer. */
const OWN_CALLS = new Set(['Reply.header', 'Reply.headers', 'Reply.getHeader', 'Reply.hasHeader', 'Reply.removeHeader', 'Reply.code'])

/**
 * A piece's methods that stand in for Node's and call them (draining's `writeHead`, which writes
 * every answer's head): only their own frame is the piece's, what runs above it is Node's.
 */
const STANDS_IN: [RegExp, string][] = [[/\/src\/lifecycle\.ts$/, 'writeHead']]

function pieceOf(stack: CallFrame[]): string | undefined {
  for (const [depth, { url, functionName }] of stack.entries()) {
    if (LIFECYCLE.test(url) && !OWN_CALLS.has(functionName)) return undefined
    const found = PIECES.find(([pattern]) => pattern.test(url))
    if (found === undefined) continue
    return depth > 0 && STANDS_IN.some(([file, name]) => file.test(url) && name === functionName) ? undefined : found[1]
  }
  return undefined
}

/**
 * Each owner's share of the busy samples, largest first, and the busy time in milliseconds; and
 * each piece's share (see PIECES), the rest being Node's and Fastify's own work. With `lastMs`,
 * only the samples of that long before the last busy one count: the load, without the start-up
 * and setup before it. Shares, not times: a sample's time is the wall clock's, which on a busy
 * machine holds time the process waited for a core.
 */
export function profileShares(
  path: string,
  { lastMs = Infinity }: { lastMs?: number } = {},
): { busyMs: number; shares: [string, number][]; pieces: [string, number][] } {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parentOf = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id)
  const owners = new Map<number, { owner: string; piece: string | undefined }>()
  const ownerOf = (id: number) => {
    let found = owners.get(id)
    if (found === undefined) {
      const stack: CallFrame[] = []
      for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) stack.push(byId.get(at)!.callFrame)
      found = { owner: owner(stack), piece: pieceOf(stack) }
      owners.set(id, found)
    }
    return found
  }
  const at: number[] = []
  let lastBusy = 0
  profile.samples.reduce((time, id, i) => {
    at.push(time + profile.timeDeltas[i]!)
    if (ownerOf(id).owner !== 'idle') lastBusy = at[i]!
    return at[i]!
  }, 0)
  const micros = new Map<string, number>()
  const pieceMicros = new Map<string, number>()
  profile.samples.forEach((id, i) => {
    if (at[i]! < lastBusy - lastMs * 1000) return
    const { owner: who, piece } = ownerOf(id)
    micros.set(who, (micros.get(who) ?? 0) + profile.timeDeltas[i]!)
    if (piece !== undefined && who !== 'idle' && who !== 'start-up')
      pieceMicros.set(piece, (pieceMicros.get(piece) ?? 0) + profile.timeDeltas[i]!)
  })
  micros.delete('idle')
  micros.delete('start-up')
  const busy = [...micros.values()].reduce((a, b) => a + b, 0)
  const sharesOf = (map: Map<string, number>) => [...map].map(([who, us]): [string, number] => [who, us / busy]).sort((a, b) => b[1] - a[1])
  return { busyMs: busy / 1000, shares: sharesOf(micros), pieces: sharesOf(pieceMicros) }
}
