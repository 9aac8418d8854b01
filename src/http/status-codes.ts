/**
 * Node's reason phrases, taken from the loaded module rather than by `import … from 'node:http'`:
 * an import builds the module's namespace, which reads every export, and three of them load
 * Node's whole fetch implementation (undici) on first read. The service never uses it, and every
 * process would start that much slower (docs/performance-log.md#starting-without-nodes-fetch-29-november-2026).
 */
export const { STATUS_CODES } = process.getBuiltinModule('node:http')
