// forge-policy's OpenCode plugin, written by `forge-policy init --harness opencode`. Commit it:
// it names no path of one machine. OpenCode loads it from .opencode/plugins/ at startup; it hands
// every tool call to this project's forge-policy hook launcher (__LAUNCHER__, found from this
// file's own place) and does what the answer says. It refuses a call when the hook cannot start,
// crashes, times out or answers anything but a decision: no answer is never an allow.
// forge-policy-plugin-version: __VERSION__
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import path from "node:path"

const LAUNCHER = "__LAUNCHER__"
const TIMEOUT_SECONDS = 30
const OUTPUT_LIMIT = 65536
const ANSWER_LIMIT = 1048576
const REMEMBERED = 1000

function projectFolder() {
  // .opencode/plugins/forge-policy.js -> the project folder two levels up
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")
}

function timeoutMs() {
  const seconds = Number(process.env.FORGE_OPENCODE_TIMEOUT || TIMEOUT_SECONDS)
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : TIMEOUT_SECONDS * 1000
}

function ask(project, payload) {
  return new Promise((resolve, reject) => {
    let child
    try {
      child = spawn(path.resolve(project, LAUNCHER), ["--harness", "opencode"], {
        cwd: project,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true, // its own process group: a timeout kills what it started too
      })
    } catch (error) {
      reject(new Error(`the hook could not start: ${error.message}`))
      return
    }
    let out = ""
    let err = ""
    let done = false
    const finish = (error, value) => {
      if (done) return
      done = true
      clearTimeout(timer)
      if (error) reject(error)
      else resolve(value)
    }
    const stop = (why) => {
      try {
        process.kill(-child.pid, "SIGKILL")
      } catch {
        child.kill("SIGKILL")
      }
      for (const stream of [child.stdin, child.stdout, child.stderr]) stream.destroy()
      finish(new Error(why))
    }
    const timer = setTimeout(
      () => stop(`the hook did not answer within ${timeoutMs() / 1000} s`),
      timeoutMs(),
    )
    child.stdout.on("data", (chunk) => {
      out += chunk
      if (out.length > ANSWER_LIMIT) stop("the hook's answer is too long")
    })
    child.stderr.on("data", (chunk) => {
      if (err.length < 4096) err += chunk
    })
    child.on("error", (error) => finish(new Error(`the hook could not start: ${error.message}`)))
    child.on("close", (code, signal) => {
      const said = err.trim().split("\n")[0] || "no message"
      if (signal) return finish(new Error(`the hook was killed by ${signal}: ${said}`))
      if (code !== 0) return finish(new Error(`the hook exited ${code}: ${said}`))
      let answer
      try {
        answer = JSON.parse(out)
      } catch {
        return finish(new Error(`the hook's answer is not JSON: ${out.slice(0, 200) || "(empty)"}`))
      }
      const decision = answer && typeof answer === "object" ? answer.decision : undefined
      if (decision !== "allow" && decision !== "deny") {
        return finish(new Error(`the hook's answer has no decision: ${out.slice(0, 200)}`))
      }
      finish(null, answer)
    })
    child.stdin.on("error", () => {}) // a hook that exits without reading: judged on close
    child.stdin.end(JSON.stringify(payload))
  })
}

function remember(map, key, value) {
  map.set(key, value)
  if (map.size > REMEMBERED) map.delete(map.keys().next().value)
}

export const ForgePolicy = async ({ directory }) => {
  const project = projectFolder()
  const parents = new Map() // child session -> the session whose task tool started it
  const agents = new Map() // session -> its agent
  const advice = new Map() // call -> what the model is to read after it
  const called = new Map() // call -> its arguments (older OpenCode sends none after the call)
  let servers = [] // the MCP servers of OpenCode's config: their tools are <server>_<tool>
  const root = (session) => {
    let current = session
    for (let hops = 0; hops < 32 && parents.has(current); hops++) current = parents.get(current)
    return current
  }
  const payload = (event, input, args) => {
    const body = {
      hook_event_name: event,
      tool: input.tool,
      tool_input: args,
      sessionID: input.sessionID,
      callID: input.callID,
      directory: directory || project,
    }
    const top = root(input.sessionID)
    if (top !== input.sessionID) body.rootSessionID = top
    if (agents.has(input.sessionID)) body.agent = agents.get(input.sessionID)
    if (servers.length) body.mcpServers = servers
    return body
  }
  return {
    config: async (config) => {
      const mcp = config && config.mcp
      if (mcp && typeof mcp === "object") servers = Object.keys(mcp)
    },
    event: async ({ event }) => {
      const info = event && event.properties && event.properties.info
      if (event && event.type === "session.created" && info && info.id && info.parentID) {
        remember(parents, info.id, info.parentID)
      }
    },
    "chat.message": async (input) => {
      if (input && input.sessionID && input.agent) remember(agents, input.sessionID, input.agent)
    },
    "tool.execute.before": async (input, output) => {
      remember(called, input.callID, output.args)
      let answer
      try {
        answer = await ask(project, payload("tool.execute.before", input, output.args))
      } catch (error) {
        throw new Error(`forge-policy could not decide this call, so it is refused: ${error.message}`)
      }
      if (answer.decision === "deny") {
        throw new Error(String(answer.reason || "forge-policy refused this call"))
      }
      const args = answer.args
      if (args && typeof args === "object" && output.args && typeof output.args === "object") {
        // the tool runs with this very object: set the values of the arguments it has
        for (const key of Object.keys(output.args)) {
          if (Object.prototype.hasOwnProperty.call(args, key)) output.args[key] = args[key]
        }
      }
      if (typeof answer.message === "string" && answer.message) {
        remember(advice, input.callID, answer.message)
      }
    },
    "tool.execute.after": async (input, output) => {
      const notes = []
      if (advice.has(input.callID)) {
        notes.push(advice.get(input.callID))
        advice.delete(input.callID)
      }
      // a built-in tool's result is {title, output, metadata}; an MCP tool's is MCP's own
      // {content: [{type: "text", text}, ...]}, which the model reads instead
      const mcp = Array.isArray(output.content)
      const text =
        typeof output.output === "string"
          ? output.output
          : mcp
            ? output.content
                .filter((part) => part && part.type === "text" && typeof part.text === "string")
                .map((part) => part.text)
                .join("\n")
            : ""
      const body = payload("tool.execute.after", input, input.args || called.get(input.callID) || {})
      called.delete(input.callID)
      body.output = text.slice(0, OUTPUT_LIMIT)
      body.title = output.title
      try {
        const answer = await ask(project, body)
        const said = answer.decision === "deny" ? answer.reason : answer.message
        if (typeof said === "string" && said) notes.push(said)
      } catch (error) {
        notes.push(`forge-policy could not check this call after it ran: ${error.message}`)
      }
      if (!notes.length) return
      if (mcp) output.content.push({ type: "text", text: notes.join("\n\n") })
      else output.output = [text, ...notes].filter(Boolean).join("\n\n")
    },
  }
}
