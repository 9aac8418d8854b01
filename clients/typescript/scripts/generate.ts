/**
 * `npm run generate`: writes the client's types from the service's OpenAPI document (openapi.json
 * at the root of the repository, written by `npm run openapi`) with openapi-typescript.
 */
import { readFile, writeFile } from 'node:fs/promises'
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript'

export const DOCUMENT = new URL('../../../openapi.json', import.meta.url)
export const GENERATED = new URL('../src/generated/openapi.ts', import.meta.url)

/** The types of `openapi.json` as it is now, as the generated file should hold them. */
export async function generatedTypes(): Promise<string> {
  const ast = await openapiTS(await readFile(DOCUMENT, 'utf8'), { silent: true })
  return `${COMMENT_HEADER.replace('Do not make direct changes to the file.', 'Do not change it: run `npm run generate` after `npm run openapi`.')}${astToString(ast)}`
}

if (import.meta.main) {
  await writeFile(GENERATED, await generatedTypes())
  console.log(`wrote ${GENERATED.pathname}`)
}
