/**
 * Run by npm install and npm ci: when npm itself runs on a Node.js older than the project's, says
 * once why that is fine, in place of the warning npm would give for every package (see .npmrc).
 */
const PROJECT_MAJOR = 24

// The script runs on the project's own Node.js; npm's is in its user agent ("npm/11.6.2 node/v20.19.5 …").
const npmNode = /\bnode\/v(\d+)\.\S*/.exec(process.env.npm_config_user_agent ?? '')
if (npmNode && Number(npmNode[1]) < PROJECT_MAJOR) {
  console.log(
    `npm runs on Node.js ${npmNode[0].slice('node/'.length)}; the service, its tests and its scripts run on the Node.js ${process.versions.node} installed with them (node_modules/.bin/node), which every package accepts.`,
  )
}
