/** Questions on the terminal: passwords typed without echo, yes or no; lines read from stdin when it is not a terminal. */
import { createInterface } from 'node:readline'
import type { Terminal } from './context.ts'
import { Refusal } from './exit.ts'

let piped: AsyncIterator<string> | undefined

/** The next line of stdin when it is a file or a pipe: `echo "$PASSWORD" | book-catalogue login …`. */
async function nextLine(terminal: Terminal, what: string): Promise<string> {
  piped ??= createInterface({ input: terminal.stdin, crlfDelay: Infinity })[Symbol.asyncIterator]()
  const line = await piped.next()
  if (line.done) throw new Refusal(`no ${what} on stdin`)
  return line.value
}

function interrupted(): Error {
  return Object.assign(new Error('interrupted'), { name: 'AbortError' })
}

/** A secret typed on the terminal, shown as nothing at all; from stdin's next line when it is not a terminal. */
export async function askSecret(terminal: Terminal, question: string): Promise<string> {
  const { stdin, stderr } = terminal
  if (!stdin.isTTY) return nextLine(terminal, question.replace(/:\s*$/, '').toLowerCase())
  stderr.write(question)
  stdin.setRawMode(true)
  stdin.setEncoding('utf8')
  stdin.resume()
  try {
    return await new Promise<string>((resolve, reject) => {
      let typed = ''
      const onData = (text: string) => {
        for (const char of text) {
          if (char === '\r' || char === '\n' || char === '\u0004') {
            stdin.off('data', onData)
            return resolve(typed)
          }
          if (char === '\u0003') {
            stdin.off('data', onData)
            return reject(interrupted())
          }
          typed = char === '\u007f' || char === '\b' ? [...typed].slice(0, -1).join('') : typed + char
        }
      }
      stdin.on('data', onData)
    })
  } finally {
    stdin.setRawMode(false)
    stdin.pause()
    stderr.write('\n')
  }
}

/** Yes unless the answer starts with n: asked only on a terminal. */
export async function confirm(terminal: Terminal, question: string): Promise<boolean> {
  const reader = createInterface({ input: terminal.stdin, output: terminal.stderr })
  try {
    const answer = await new Promise<string>((resolve, reject) => {
      reader.once('SIGINT', () => reject(interrupted()))
      reader.question(`${question} [Y/n] `, resolve)
    })
    return !/^\s*n/i.test(answer)
  } finally {
    reader.close()
  }
}
