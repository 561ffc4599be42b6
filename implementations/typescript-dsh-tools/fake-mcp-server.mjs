// A scripted MCP server on standard input/output (newline-delimited JSON-RPC), for the adapter's MCP fixtures.
//
// The adapter starts the original's MCP bridge (`@deepseek-ai/dsh-mcp-client`) with a stdio transport whose command
// is this script. The tools it lists, and the raw `CallToolResult` each one answers to every call, come from the
// environment variable TOOLCONTRACT_MCP_TOOLS: a JSON array of {name, description, inputSchema, outputSchema?,
// execution?, response}. It answers `initialize`, `tools/list` and `tools/call` (and `ping`); any other request is
// a JSON-RPC "method not found" error. It exits when its input ends.

import { createInterface } from 'node:readline'

const tools = JSON.parse(process.env.TOOLCONTRACT_MCP_TOOLS ?? '[]')
const byName = new Map(tools.map(tool => [tool.name, tool]))

function send(message) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`)
}

function answer(request) {
  switch (request.method) {
    case 'initialize':
      return {
        protocolVersion: request.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'toolcontract-fixture', version: '1.0.0' },
      }
    case 'ping':
      return {}
    case 'tools/list':
      return {
        tools: tools.map(({ response: _response, ...listed }) => listed),
      }
    case 'tools/call': {
      const tool = byName.get(request.params?.name)
      if (tool === undefined) throw Object.assign(new Error(`unknown tool ${request.params?.name}`), { code: -32602 })
      return tool.response
    }
    default:
      throw Object.assign(new Error(`method not found: ${request.method}`), { code: -32601 })
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue
  const message = JSON.parse(line)
  if (message.id === undefined || message.method === undefined) continue // a notification or a response
  try {
    send({ id: message.id, result: answer(message) })
  } catch (error) {
    send({ id: message.id, error: { code: error.code ?? -32603, message: error.message } })
  }
}
