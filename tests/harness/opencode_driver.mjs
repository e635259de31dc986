// Drives forge-policy's OpenCode plugin the way OpenCode calls it (packages/opencode/src/session/
// tools.ts): the plugin function with its input, then per tool call `tool.execute.before` with
// {tool, sessionID, callID} and {args} (a throw refuses the call), the tool "runs", then
// `tool.execute.after` with {tool, sessionID, callID, args} and {title, output, metadata}.
// argv: plugin file, OpenCode's directory, a JSON list of steps; prints one JSON result per step.
import { pathToFileURL } from "node:url"

const [plugin, directory, stepsText] = process.argv.slice(2)
const mod = await import(pathToFileURL(plugin).href)
const exported = Object.values(mod)
if (exported.length !== 1 || typeof exported[0] !== "function") {
  throw new Error(`the plugin must export one function (OpenCode calls every export): ${Object.keys(mod)}`)
}
const hooks = await exported[0]({ directory, worktree: directory, project: {}, client: {}, $: null })
const results = []
for (const step of JSON.parse(stepsText)) {
  if (step.event) {
    await hooks.event({ event: step.event })
    results.push({ event: step.event.type })
    continue
  }
  if (step.config) {
    await hooks.config(step.config)
    results.push({ config: true })
    continue
  }
  if (step.message) {
    await hooks["chat.message"](step.message, { message: {}, parts: [] })
    results.push({ message: true })
    continue
  }
  const input = { tool: step.tool, sessionID: step.session, callID: step.call }
  const output = { args: step.args }
  const started = Date.now()
  try {
    await hooks["tool.execute.before"](input, output)
  } catch (error) {
    results.push({ ran: false, error: error.message, seconds: (Date.now() - started) / 1000 })
    continue
  }
  const after = step.content
    ? { content: step.content } // an MCP tool's result
    : { title: "ran", output: step.output ?? "ran", metadata: {} }
  await hooks["tool.execute.after"]({ ...input, args: output.args }, after)
  results.push({ ran: true, args: output.args, output: after.output ?? after.content })
}
console.log(JSON.stringify(results))
