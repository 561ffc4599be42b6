// The original registry (@deepseek-ai/dsh-tools) timed on the benchmark's own inputs, for bench/run.py.
//
//   node bench/upstream.mjs <value.json> <sha256> <runs> <calls> [group,...]
//
// <value.json> is the benchmark value exactly as bench/data.py generates it (compact JSON, checked against
// <sha256> before anything runs), beside it schema.json its schema. Every other input is built here the way
// bench/run.py builds it for the reference. Each figure is the median of <runs> timed runs after one warm-up,
// in seconds, timed with process.hrtime.bigint(); the trivial call is the time per call of <calls> calls in a
// row. The groups (trivial, value, arguments, items, wide; all by default) choose what runs. One JSON object
// is printed on stdout, {"node": version, "figures": {name: seconds}} (bench/run.py names the same figures),
// and each figure on stderr as it is measured.
//
// Tools are registered and called through the original's public API: a cordis Context with the system-prompt
// service and the ToolRuntime plugin (as packages/core/tools/tests/tools.spec.ts sets it up), ctx.tools.register
// and ctx.tools.execute.

import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

import { requireEngine } from '../implementations/typescript-dsh-tools/engine.mjs'

requireEngine('bench/upstream.mjs')

const HERE = dirname(fileURLToPath(import.meta.url))
const INSTALLED = join(HERE, '..', 'implementations', 'typescript-dsh-tools', 'package.json')
const resolve = createRequire(INSTALLED).resolve
const load = async (name) => import(pathToFileURL(resolve(name)).href)

const { Context } = await load('@deepseek-ai/cordis')
const { default: SystemPrompt } = await load('@deepseek-ai/dsh-system-prompt')
const { default: ToolRuntime, defineTool } = await load('@deepseek-ai/dsh-tools')

const [valuePath, expectedSha256, runsText, callsText, groupsText] = process.argv.slice(2)
const RUNS = Number(runsText ?? 5)
const CALLS = Number(callsText ?? 5000)
const GROUPS = new Set((groupsText ?? 'trivial,value,arguments,items,wide').split(','))
const signal = new AbortController().signal
const render = (_args, _value) => [{ type: 'text', text: 'summary' }]

function seconds(started) {
  return Number(process.hrtime.bigint() - started) / 1e9
}

function median(samples) {
  const sorted = [...samples].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/** Median seconds of `measure()` (which returns seconds) over RUNS runs after one warm-up run. */
async function medianOf(measure, runs = RUNS) {
  await measure()
  const samples = []
  for (let run = 0; run < runs; run += 1) samples.push(await measure())
  return median(samples)
}

async function timed(action) {
  const started = process.hrtime.bigint()
  await action()
  return seconds(started)
}

async function registry() {
  const ctx = new Context()
  await ctx.plugin(SystemPrompt)
  await ctx.plugin(ToolRuntime)
  return ctx
}

/** A raw tool returning `holder.value`, registered on `ctx`; returns its disposer. */
function register(ctx, name, schema, holder) {
  return ctx.tools.register({
    name,
    description: 'Return the benchmark value.',
    parameters: { type: 'object' },
    output: { schema, render },
    async execute() { return holder.value },
  })
}

let callCount = 0
async function execute(ctx, name, args = {}) {
  callCount += 1
  return ctx.tools.execute({ signal, callId: `c${callCount}`, name, arguments: args })
}

async function executeOk(ctx, name, args) {
  const result = await execute(ctx, name, args)
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`)
  return result
}

function nested(depth) {
  let value = 'leaf'
  for (let level = 0; level < depth; level += 1) value = [value]
  return value
}

function itemsChain(depth) {
  let schema = { type: 'string' }
  for (let level = 0; level < depth; level += 1) schema = { type: 'array', items: schema }
  return schema
}

function wideSchema(count, run) {
  const properties = {}
  const required = []
  for (let index = 0; index < count; index += 1) {
    properties[`p${index}`] = { type: 'integer' }
    required.push(`p${index}`)
  }
  // a distinct text per run, as the reference's run gives its caches a schema never seen before
  return { type: 'object', description: `run ${run}`, additionalProperties: false, properties, required }
}

function wideValue(count) {
  const value = {}
  for (let index = 0; index < count; index += 1) value[`p${index}`] = index
  return value
}

const text = readFileSync(valuePath)
const sha256 = createHash('sha256').update(text).digest('hex')
if (sha256 !== expectedSha256) throw new Error(`benchmark value differs: SHA-256 ${sha256}, expected ${expectedSha256}`)
const benchValue = JSON.parse(text.toString('utf8'))
const benchSchema = JSON.parse(readFileSync(join(dirname(valuePath), 'schema.json'), 'utf8'))
const figures = new Proxy({}, {
  set(target, name, value) {
    process.stderr.write(`original: ${name}: ${(value * 1e3).toFixed(3)} ms\n`)
    target[name] = value
    return true
  },
})

// a trivial call: the echo tool of bench/run.py's dispatch section
if (GROUPS.has('trivial')) {
  const ctx = await registry()
  ctx.tools.register(defineTool({
    name: 'echo',
    description: '',
    parameters: { text: { type: 'string' } },
    output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
    execute: (args) => args.text,
  }))
  figures['trivial call'] = await medianOf(() => timed(async () => {
    for (let call = 0; call < CALLS; call += 1) await execute(ctx, 'echo', { text: 'hi' })
  })) / CALLS
}

// the benchmark value, and the same value made invalid or not lossless in its last record
if (GROUPS.has('value')) {
  const ctx = await registry()
  const holder = { value: benchValue }
  register(ctx, 'records', benchSchema, holder)
  figures['execute'] = await medianOf(() => timed(() => executeOk(ctx, 'records')))
  const last = benchValue.length - 1
  const invalid = JSON.parse(text.toString('utf8'))
  invalid[last].tier = 7
  const notLossless = JSON.parse(text.toString('utf8'))
  notLossless[last].score = Number.NaN
  for (const [name, value] of [['execute invalid', invalid], ['execute not lossless', notLossless]]) {
    holder.value = value
    figures[name] = await medianOf(async () => {
      const started = process.hrtime.bigint()
      const result = await execute(ctx, 'records')
      const elapsed = seconds(started)
      if (!result.isError) throw new Error(`${name}: the value was accepted`)
      return elapsed
    })
  }
}

// arguments nested deep, through a tool that ignores them
if (GROUPS.has('arguments')) {
  const ctx = await registry()
  register(ctx, 'ignore', { type: 'string' }, { value: 'ok' })
  for (const depth of [10_000, 100_000]) {
    const args = { nested: nested(depth) }
    figures[`arguments ${depth}`] = await medianOf(() => timed(() => executeOk(ctx, 'ignore', args)))
  }
}

// an items chain: the schema and the value as deep (short chains: the original's cost grows with the square of
// the depth, one execute of a 5,000-deep chain takes it about a minute)
for (const depth of GROUPS.has('items') ? [500, 1_000] : []) {
  const ctx = await registry()
  register(ctx, 'chain', itemsChain(depth), { value: nested(depth) })
  figures[`items ${depth}`] = await medianOf(() => timed(() => executeOk(ctx, 'chain')))
}

// a wide output schema: registration, then the first call (a value with every property)
for (const count of GROUPS.has('wide') ? [10_000, 100_000] : []) {
  const value = wideValue(count)
  const registrations = []
  const firstCalls = []
  for (let run = 0; run <= RUNS; run += 1) {
    const ctx = await registry()
    const schema = wideSchema(count, run)
    let started = process.hrtime.bigint()
    register(ctx, 'wide', schema, { value })
    const registration = seconds(started)
    started = process.hrtime.bigint()
    await executeOk(ctx, 'wide')
    const firstCall = seconds(started)
    if (run > 0) {
      registrations.push(registration)
      firstCalls.push(firstCall)
    }
  }
  figures[`register ${count}`] = median(registrations)
  figures[`first call ${count}`] = median(firstCalls)
}

process.stdout.write(`${JSON.stringify({ node: process.version, figures })}\n`)
