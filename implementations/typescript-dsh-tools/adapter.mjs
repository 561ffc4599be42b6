// The toolcanon adapter of the original TypeScript tool registry (`@deepseek-ai/dsh-tools` and its peers).
//
// It speaks the kit's NDJSON adapter protocol, version 1 (docs/protocol.md, "Adapter protocol"), and runs each
// scenario against a fresh cordis Context holding the original's real services, in the order a scenario reads:
//
// 1. Applicability: a capability this adapter lacks, or an exotic value JavaScript cannot express, is `skipped`.
// 2. Fixture tools, built from the behaviour catalogue and registered through `ctx.tools.register` (a `defineTool`
//    definition for DSL parameters, a raw definition otherwise); MCP fixtures through the original's MCP bridge.
// 3. Hooks: one pass-through instrumentation hook per stage first (outermost; none for a `bare` stage), counting
//    each call's phases; then the scenario's hooks in list order, each applying only to the calls its `steps`
//    filter names.
// 4. Steps: direct calls through `ctx.tools.execute`, freeze probes, persist and model steps on a real
//    `@deepseek-ai/dsh-session` Session, their logs written and read back (damaged or not) through the original's
//    JSONL backend `@deepseek-ai/dsh-session-persistence-jsonl` in raw mode, and resumed there to be appended to
//    (`reopen`), and `schemas`.
// 5. The transcript, built in the format's key order and written with `JSON.stringify` (by an equivalent writer
//    with an explicit stack for a transcript too deep for V8's recursive one).
//
// Standard output carries protocol lines only: everything else the process prints goes to standard error. It
// refuses to start on a Node outside the original's engine range (engine.mjs), with one line on standard error.

import { createServer } from 'node:http'
import { createInterface } from 'node:readline'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

import { RELEASE_ROOT } from './release.mjs'
import { requireEngine } from './engine.mjs'

requireEngine('adapter.mjs', RELEASE_ROOT)

const protocolWrite = process.stdout.write.bind(process.stdout)
process.stdout.write = process.stderr.write.bind(process.stderr)
for (const method of ['log', 'info', 'debug', 'warn', 'error', 'trace', 'dir']) {
  console[method] = (...args) => { process.stderr.write(`${args.map(String).join(' ')}\n`) }
}

const { Context, Service } = await import('@deepseek-ai/cordis')
const { default: SystemPrompt } = await import('@deepseek-ai/dsh-system-prompt')
const { default: ToolRuntime, defineTool, valueSchemaSpecToJsonSchema, TOOL_ABORTED_BEFORE_DISPATCH } = await import('@deepseek-ai/dsh-tools')
const { default: LlmRuntime, LlmAdapter, HarnessError, createToolResultMessage } = await import('@deepseek-ai/dsh-llm')
const { AttachmentStore, AttachmentId } = await import('@deepseek-ai/dsh-attachment')
const { default: SessionStore, Session, SessionId } = await import('@deepseek-ai/dsh-session')
const { default: JsonlSessionPersistence } = await import('@deepseek-ai/dsh-session-persistence-jsonl')
const { CodeRuntime } = await import('@deepseek-ai/dsh-code-runtime')
const { SpillStore, SpillLocator } = await import('@deepseek-ai/dsh-spill')
const SpillPolicy = await import('@deepseek-ai/dsh-spill-policy')
const TimeoutPolicy = await import('@deepseek-ai/dsh-tool-call-timeout-policy')
const McpClient = await import('@deepseek-ai/dsh-mcp-client')

const HERE = dirname(fileURLToPath(import.meta.url))
const PROTOCOL_VERSION = 1
const FORMAT_VERSION = 1

/** The first-party renderers, when the module that builds them from the original's tools loads. */
const firstParty = await import('./first-party.mjs').catch((error) => {
  process.stderr.write(`first-party renderers unavailable: ${error?.stack ?? error}\n`)
  return undefined
})

const CAPABILITIES = [
  'guards',
  'wrappers',
  'post-execute',
  'finalize-content',
  'approval',
  'cancellation',
  'persistence',
  'nested',
  'mcp',
  'spill',
  'schemas',
  'timeout',
  'execution-mode',
  'generated-values',
  'model-step',
  ...firstParty?.firstPartyRenderer !== undefined ? ['first-party-renderers'] : [],
]

function packageVersion(name) {
  const manifest = JSON.parse(readFileSync(join(RELEASE_ROOT, 'node_modules', ...name.split('/'), 'package.json'), 'utf8'))
  return manifest.version
}

const IMPLEMENTATION = {
  name: '@deepseek-ai/dsh-tools',
  language: 'javascript',
  version: packageVersion('@deepseek-ai/dsh-tools'),
  capabilities: CAPABILITIES,
  homepage: 'https://github.com/deepseek-ai/deepseek-harness',
  issues: 'https://github.com/deepseek-ai/deepseek-harness/issues',
}

// --- the protocol loop -----------------------------------------------------------------------------

function reply(message) {
  protocolWrite(`${JSON.stringify(message)}\n`)
}

function erroredContext(error) {
  if (error instanceof Error) return { message: error.message, stack: error.stack ?? String(error) }
  return { message: describeThrown(error), stack: '' }
}

/** How long a run may go on after an unhandled rejection before it counts as one that never settles. */
const STRAY_GRACE_MS = 1000
let strayRejection // set while a run lasts: told of each unhandled rejection

async function answerRun(seq, scenario) {
  // The original may leave a run unsettled for ever when a promise of its own rejects unhandled (its run_code
  // bridge reading `content.some` of content that is no array): such a run is answered errored with that
  // rejection, a grace period after it, instead of waiting out the kit's timeout.
  let unsettled
  const stray = new Promise((resolve) => {
    strayRejection = (reason) => { unsettled ??= setTimeout(() => resolve({ stray: reason }), STRAY_GRACE_MS) }
  })
  try {
    const outcome = await Promise.race([runScenario(scenario), stray])
    if (outcome.stray !== undefined) {
      const context = erroredContext(outcome.stray)
      return { seq, errored: true, context: { ...context, message: `the run never settles after an unhandled rejection: ${context.message}` } }
    }
    if (outcome.skipped !== undefined) return { seq, skipped: true, message: outcome.skipped }
    return { seq, transcript: outcome.transcript }
  } catch (error) {
    return { seq, errored: true, context: erroredContext(error) }
  } finally {
    strayRejection = undefined
    clearTimeout(unsettled)
  }
}

// --- exotic values ---------------------------------------------------------------------------------

/** The exotic kinds JavaScript has no value for (docs/protocol.md, "Exotic values"). */
const JS_INEXPRESSIBLE = new Set(['unsafe-integer', 'non-string-key', 'bytes', 'tuple', 'set'])

/** The first kind, in document order, that JavaScript cannot express; `undefined` when there is none. */
function firstInexpressible(document) {
  const stack = [document]
  while (stack.length > 0) {
    const node = stack.pop()
    if (Array.isArray(node)) {
      for (let index = node.length - 1; index >= 0; index -= 1) stack.push(node[index])
    } else if (node !== null && typeof node === 'object') {
      if (Object.hasOwn(node, '$exotic')) {
        if (JS_INEXPRESSIBLE.has(node.$exotic)) return node.$exotic
        continue
      }
      const values = Object.values(node)
      for (let index = values.length - 1; index >= 0; index -= 1) stack.push(values[index])
    }
  }
  return undefined
}

class OpaqueObject {}
class DictSubclass {}
class ListSubclass extends Array {}

/** Another realm's intrinsics, for the `other-realm` kind (a snapshot accepts any realm's plain containers). */
const { runInNewContext } = await import('node:vm')

/** `{x}` whose enumerable getter answers how many times it has been read: a snapshot that reads once holds 1. */
function countingGetter() {
  let reads = 0
  return Object.defineProperty({}, 'x', { enumerable: true, get() { reads += 1; return reads } })
}

function exoticValue(tag) {
  switch (tag.$exotic) {
    case 'nan': return Number.NaN
    case 'infinity': return Number.POSITIVE_INFINITY
    case 'negative-infinity': return Number.NEGATIVE_INFINITY
    case 'negative-zero': return -0
    case 'cycle': {
      const cycle = []
      cycle.push(cycle)
      return cycle
    }
    case 'opaque-object': return new OpaqueObject()
    case 'function': return function exoticFunction() {}
    case 'lone-surrogate': return '\ud800'
    case 'undefined': return undefined
    case 'bigint': return 10n
    // eslint-disable-next-line no-sparse-arrays
    case 'sparse-array': return [1, , 3]
    case 'symbol-key': return { a: 1, [Symbol('key')]: 1 }
    case 'throwing-getter': {
      const message = tag.message ?? 'throwing getter'
      return Object.defineProperty({}, 'x', {
        enumerable: true,
        get() { throw new Error(message) },
      })
    }
    case 'dict-subclass': return Object.assign(new DictSubclass(), { a: 1 })
    case 'list-subclass': return ListSubclass.of(1, 2)
    case 'symbol': return Symbol('exotic')
    case 'null-prototype': return Object.assign(Object.create(null), { a: 1 })
    case 'other-realm': return runInNewContext('({ a: [1] })')
    case 'accessor-property': return countingGetter()
    case 'non-enumerable-key': return Object.defineProperty({ a: 1 }, 'hidden', { value: 1, enumerable: false })
    case 'array-extra-key': return Object.assign([1, 2], { extra: true })
    case 'array-symbol-key': return Object.assign([1, 2], { [Symbol('key')]: true })
    case 'date': return new Date(0)
    case 'map': return new Map([['a', 1]])
    case 'regexp': return /a/
    case 'error': return new Error('exotic')
    case 'boxed-primitive': return new Number(1)
    case 'throwing-proxy': {
      const message = tag.message ?? 'throwing proxy'
      return new Proxy({}, { ownKeys() { throw new Error(message) } })
    }
    default: throw new Error(`not expressible: ${tag.$exotic}`)
  }
}

/** `value` with every exotic tag replaced by a fresh native value (a fresh copy of the document). */
function materialize(value) {
  // Without recursion: a generated value holding a tag may be nested a hundred thousand levels deep.
  const root = [undefined]
  const work = [[value, root, 0]]
  while (work.length > 0) {
    const [node, target, slot] = work.pop()
    let built = node
    if (Array.isArray(node)) {
      built = []
      for (let index = 0; index < node.length; index += 1) {
        built.push(undefined)
        work.push([node[index], built, index])
      }
    } else if (node !== null && typeof node === 'object') {
      if (Object.hasOwn(node, '$exotic')) {
        built = exoticValue(node)
      } else {
        built = {}
        for (const [key, item] of Object.entries(node)) {
          // defined, not assigned: an own `__proto__` key stays data; defined now, so the key order is the document's
          Object.defineProperty(built, key, { value: undefined, enumerable: true, writable: true, configurable: true })
          work.push([item, built, key])
        }
      }
    }
    target[slot] = built
  }
  return root[0]
}

// --- generated values ------------------------------------------------------------------------------

/** True when `value` holds a generator tag (docs/protocol.md, "Generated values"). */
function holdsGeneratorTags(value) {
  const stack = [value]
  while (stack.length > 0) {
    const node = stack.pop()
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item)
    } else if (node !== null && typeof node === 'object') {
      if (Object.hasOwn(node, '$generate')) return true
      for (const item of Object.values(node)) stack.push(item)
    }
  }
  return false
}

/** `document` with every generator tag replaced by the JSON value it stands for, built without recursion. */
function expandGenerated(document) {
  if (!holdsGeneratorTags(document)) return document
  const root = [undefined]
  const work = [[document, root, 0]]
  const place = (node, target, slot) => {
    if (node !== null && typeof node === 'object') {
      setMember(target, slot, null) // keeps an object's member order while the member waits to be built
      work.push([node, target, slot])
    } else {
      setMember(target, slot, node)
    }
  }
  const build = (node) => {
    if (Array.isArray(node)) {
      const built = []
      node.forEach((item, index) => place(item, built, index))
      return built
    }
    if (node === null || typeof node !== 'object') return node
    if (!Object.hasOwn(node, '$generate')) {
      const built = {}
      for (const [key, item] of Object.entries(node)) place(item, built, key)
      return built
    }
    switch (node.$generate) {
      case 'string': {
        const unit = node.unit ?? 'a'
        return unit.repeat(node.length / unit.length)
      }
      case 'repeat': {
        const built = []
        for (let index = 0; index < node.count; index += 1) place(node.item, built, index)
        return built
      }
      case 'object': {
        const built = {}
        for (let index = 0; index < node.count; index += 1) place(node.value, built, `${node.key}${index}`)
        return built
      }
      case 'nest': {
        if (node.depth === 0) return build(node.leaf)
        const holder = [undefined]
        let target = holder
        let slot = 0
        for (let level = 0; level < node.depth; level += 1) {
          let built
          if (node.in === 'object') {
            built = {}
            for (const [key, item] of Object.entries(node.with ?? {})) place(item, built, key)
            setMember(built, node.key, null)
          } else {
            built = [null]
          }
          setMember(target, slot, built)
          target = built
          slot = node.in === 'object' ? node.key : 0
        }
        place(node.leaf, target, slot)
        return holder[0]
      }
      default:
        throw new Error(`unknown generator ${JSON.stringify(node.$generate)}`)
    }
  }
  while (work.length > 0) {
    const [node, target, slot] = work.pop()
    setMember(target, slot, build(node))
  }
  return root[0]
}

/** `target[slot] = value`, where an object's `__proto__` key is data, as `JSON.parse` makes it. */
function setMember(target, slot, value) {
  if (Array.isArray(target)) target[slot] = value
  else Object.defineProperty(target, slot, { value, enumerable: true, writable: true, configurable: true })
}

// --- canonical JSON text ---------------------------------------------------------------------------

/** `JSON.stringify(value, null, indent)`, also for a value nested too deep for V8's recursive writer. */
function writeJson(value, indent) {
  try {
    return JSON.stringify(value, null, indent)
  } catch (error) {
    if (!(error instanceof RangeError)) throw error
  }
  return writeJsonIteratively(value, indent)
}

/** What `JSON.stringify` writes for a value that is not a container; `undefined` for what it leaves out. */
function scalarJson(value) {
  if (value === null) return 'null'
  switch (typeof value) {
    case 'string': return JSON.stringify(value)
    case 'number': return Number.isFinite(value) ? String(value) : 'null'
    case 'boolean': return value ? 'true' : 'false'
    case 'bigint': throw new TypeError('Do not know how to serialize a BigInt')
    default: return undefined
  }
}

function skippedByJson(value) {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol'
}

/** `JSON.stringify(value, null, indent)` of plain data (no `toJSON`, no cycles), with an explicit stack. */
function writeJsonIteratively(value, indent) {
  const gap = typeof indent === 'number' ? ' '.repeat(Math.max(0, Math.min(10, Math.trunc(indent))))
    : typeof indent === 'string' ? indent.slice(0, 10) : ''
  // V8 breaks lines for any number above 0, a fraction below 1 (an empty gap) included
  const lines = typeof indent === 'number' ? indent > 0 : gap !== ''
  const parts = []
  const frames = []
  const write = (node) => {
    if (node !== null && typeof node === 'object') {
      const isArray = Array.isArray(node)
      frames.push({ node, keys: isArray ? undefined : Object.keys(node), next: 0, written: 0, isArray })
      parts.push(isArray ? '[' : '{')
      return true
    }
    const text = scalarJson(node)
    if (text === undefined) return false
    parts.push(text)
    return true
  }
  if (!write(value)) return undefined
  while (frames.length > 0) {
    const frame = frames[frames.length - 1]
    const depth = frames.length
    const size = frame.isArray ? frame.node.length : frame.keys.length
    if (frame.next >= size) {
      frames.pop()
      if (frame.written > 0 && lines) parts.push(`\n${gap.repeat(depth - 1)}`)
      parts.push(frame.isArray ? ']' : '}')
      continue
    }
    const at = frame.next
    frame.next += 1
    const item = frame.isArray ? frame.node[at] : frame.node[frame.keys[at]]
    if (!frame.isArray && skippedByJson(item)) continue
    parts.push(`${frame.written > 0 ? ',' : ''}${lines ? `\n${gap.repeat(depth)}` : ''}`)
    if (!frame.isArray) parts.push(`${JSON.stringify(frame.keys[at])}:${lines ? ' ' : ''}`)
    frame.written += 1
    if (!write(item)) parts.push('null')
  }
  return parts.join('')
}

// --- what the transcript reports -------------------------------------------------------------------

/** The original's message extraction for a thrown value (index.ts `errorMessage`), for the adapter's own use. */
function describeThrown(error) {
  try {
    if (error instanceof Error) return error.message
    if (typeof error === 'object' && error !== null && typeof error.message === 'string') return error.message
    return String(error)
  } catch {
    return '<unprintable thrown value>'
  }
}

/** A scenario's additional context `{id, text}` as the registry's context message (a user-role message). */
function contextMessage(context) {
  return { role: 'user', content: [{ type: 'text', text: context.text }], id: context.id }
}

function contextMessages(action) {
  return (action.additionalContexts ?? []).map(contextMessage)
}

/** A context reported back: `{id, text}` for a scenario's own, `{source, content}` for one the original made. */
function contextReport(message) {
  if (message !== null && typeof message === 'object' && !Array.isArray(message)) {
    const keys = Object.keys(message)
    if (keys.length === 3 && ['role', 'content', 'id'].every(key => keys.includes(key))
      && Array.isArray(message.content) && message.content.length === 1
      && message.content[0] !== null && typeof message.content[0] === 'object') {
      return { id: message.id, text: message.content[0].text }
    }
    return { source: message.source, content: message.content }
  }
  return { source: undefined, content: message }
}

/**
 * A content list as the transcript reports it: an image block holding a reference the scenario's attachment
 * store issued shows that reference as `{mediaType, bytes}`, without the store's own parts (its generated id).
 */
function contentReport(content, issued) {
  if (!Array.isArray(content) || issued.size === 0) return content
  return content.map((block) => {
    const reference = isRecord(block) && block.type === 'image' && isRecord(block.attachment)
      ? issued.get(block.attachment.attachmentId)
      : undefined
    return reference === undefined ? block : { ...block, attachment: reference }
  })
}

/** A result in the transcript's key order: isError, value | error, content, meta?, contexts?, concludesTurn? */
function resultReport(result, issued = new Map()) {
  const report = { isError: result.isError }
  if (result.isError) {
    const error = { message: result.error.message }
    if (result.error.info !== undefined) error.info = { name: result.error.info.name, code: result.error.info.code }
    report.error = error
  } else {
    report.value = result.value
  }
  report.content = contentReport(result.content, issued)
  if (result.meta !== undefined) report.meta = result.meta
  if (result.additionalContexts !== undefined) report.additionalContexts = result.additionalContexts.map(contextReport)
  if (result.concludesTurn === true) report.concludesTurn = true
  return report
}

/** The contract's name of an error: a coded error's own, `TypeError`, or `Error` for anything else. */
function contractErrorName(error) {
  if (error instanceof HarnessError) return error.name
  if (error instanceof TypeError) return 'TypeError'
  return 'Error'
}

function registrationErrorReport(error) {
  const report = { name: contractErrorName(error) }
  if (error instanceof HarnessError) report.code = error.code
  report.message = describeThrown(error)
  return report
}

function newPhases() {
  return { pre: 0, guard: 0, execute: 0, body: 0, post: 0, finalize: 0, observed: 0 }
}

/** The `phases` key of each stage a scenario may list as `bare`. */
const BARE_KEYS = { 'pre-execute': 'pre', 'guard': 'guard', 'execute': 'execute', 'post-execute': 'post' }

/** The transcript's `phases` object, in its key order, without the keys of the `bare` stages. */
function phasesReport(phases, withFinalize, bare = new Set()) {
  const report = {}
  for (const key of ['pre', 'guard', 'execute', 'body', 'post']) if (!bare.has(key)) report[key] = phases[key]
  if (withFinalize) report.finalize = phases.finalize
  report.observed = phases.observed
  return report
}

// --- small helpers ---------------------------------------------------------------------------------

const MISSING = Symbol('missing')
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/
const NESTED_CALL_ID = /^(?<outer>.+):code:[0-9]+$/

/** The value of the first of `keys` that `object` owns, else `fallback`. */
function firstOwn(object, keys, fallback) {
  const key = keys.find(candidate => Object.hasOwn(object, candidate))
  return key === undefined ? fallback : object[key]
}

function isRecord(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function text(value) {
  return { type: 'text', text: value }
}

function asText(value) {
  return typeof value === 'string' ? value : writeJson(value)
}

/** A child on a probe path or a `field` renderer: an own key of an object, an index of an array. */
function child(node, element) {
  if (Array.isArray(node)) {
    return Number.isInteger(element) && element >= 0 && element < node.length ? node[element] : MISSING
  }
  if (isRecord(node) && typeof element === 'string' && Object.hasOwn(node, element)) return node[element]
  return MISSING
}

function fieldText(value, name) {
  const field = child(value, Array.isArray(value) && ARRAY_INDEX.test(name) ? Number(name) : name)
  return field === MISSING ? '' : asText(field)
}

/**
 * A `raise` behaviour's error: the original's coded error class when `error` is given, else an ordinary one, which
 * carries `code` as an own property when given, as a system error does (`ENOENT`): still no coded error.
 */
function behaviourError(spec) {
  if (spec.error !== undefined) {
    const error = new HarnessError(spec.message, spec.error.code)
    error.name = spec.error.name
    return error
  }
  const error = new Error(spec.message)
  if (spec.code !== undefined) error.code = spec.code
  return error
}

/** A fixture's `isConcurrencySafe`: a constant answer, one of its arguments, or a throw. */
function concurrencyCheck(spec) {
  return (args) => {
    if (spec.kind === 'raise') throw behaviourError(spec)
    if (spec.kind === 'return-arg') return isRecord(args) && Object.hasOwn(args, spec.arg) ? args[spec.arg] : null
    return materialize(spec.value)
  }
}

/** The content with its first text block cut to `chars` UTF-16 code units (`undefined`: nothing to cut). */
function truncateFirstText(content, chars) {
  if (!Array.isArray(content)) return undefined // content that is no array holds no text block
  const blocks = [...content]
  const position = blocks.findIndex(block => isRecord(block) && block.type === 'text' && typeof block.text === 'string')
  if (position < 0) return undefined
  blocks[position] = { ...blocks[position], text: blocks[position].text.slice(0, chars) }
  return blocks
}

function programResult(selector, received) {
  if (selector === 'received') return received
  let chosen
  if (selector === 'last') chosen = received.length > 0 ? received[received.length - 1] : {}
  else if (Number.isInteger(selector) && selector < received.length) chosen = received[selector]
  else return null
  return Object.hasOwn(chosen, 'value') ? chosen.value : null
}

/** A scenario state the original cannot be driven into: the scenario is answered `errored` with the reason. */
class UnreachableState extends Error {
  constructor(message) {
    super(message)
    this.name = 'UnreachableState'
  }
}

// --- probes ----------------------------------------------------------------------------------------

/** What a mutation could change on a container: its own properties, prototype and extensibility. */
function fingerprint(container) {
  const keys = Reflect.ownKeys(container)
  return {
    prototype: Object.getPrototypeOf(container),
    extensible: Object.isExtensible(container),
    properties: keys.map((key) => {
      const descriptor = Object.getOwnPropertyDescriptor(container, key)
      return [key, descriptor.value, descriptor.get, descriptor.set, descriptor.writable, descriptor.enumerable, descriptor.configurable]
    }),
  }
}

function sameFingerprint(left, right) {
  if (left.prototype !== right.prototype || left.extensible !== right.extensible) return false
  if (left.properties.length !== right.properties.length) return false
  return left.properties.every((entry, index) => entry.every((part, slot) => Object.is(part, right.properties[index][slot])))
}

/** Every mutation JavaScript offers on an object or an array; each returns `false` when the engine refused it. */
function mutations(container) {
  const marker = { probe: true }
  const common = [
    () => { container.probe = marker },
    () => Reflect.set(container, 'probe', marker),
    () => Object.defineProperty(container, 'probe', { value: marker, enumerable: true, configurable: true, writable: true }),
    () => Reflect.defineProperty(container, 'probe', { value: marker }),
    () => Object.setPrototypeOf(container, null),
    () => Reflect.setPrototypeOf(container, null),
    () => Object.assign(container, { probe: marker }),
  ]
  if (Array.isArray(container)) {
    return [
      () => { container[0] = marker },
      () => Reflect.set(container, 0, marker),
      () => { container[container.length] = marker },
      () => { delete container[0] },
      () => Reflect.deleteProperty(container, 0),
      () => { container.length = container.length + 1 },
      () => { container.length = 0 },
      () => container.push(marker),
      () => container.pop(),
      () => container.shift(),
      () => container.unshift(marker),
      () => container.splice(0, 1, marker),
      () => container.splice(0, 0, marker),
      () => container.sort(() => -1),
      () => container.reverse(),
      () => container.fill(marker),
      () => container.copyWithin(0, 1),
      () => Object.defineProperty(container, 0, { value: marker }),
      ...common,
    ]
  }
  const [first] = Object.keys(container)
  const key = first ?? 'probe'
  return [
    () => { container[key] = marker },
    () => Reflect.set(container, key, marker),
    () => { delete container[key] },
    () => Reflect.deleteProperty(container, key),
    () => Object.defineProperty(container, key, { value: marker }),
    ...common,
  ]
}

/** True when every mutation threw or was refused and the container is unchanged afterwards. */
function resistsEveryMutation(container) {
  const before = fingerprint(container)
  for (const mutate of mutations(container)) {
    let outcome
    try {
      outcome = mutate()
    } catch {
      continue
    }
    if (outcome === false) continue
    if (!sameFingerprint(before, fingerprint(container))) return false
  }
  return sameFingerprint(before, fingerprint(container))
}

/** A signal as a `seen` report shows it: whether it was aborted, and its reason when that is a string. */
function signalReport(signal) {
  const aborted = signal !== undefined && signal.aborted
  return { aborted, reason: aborted && typeof signal.reason === 'string' ? signal.reason : null }
}

/** What a `mutate-then` behaviour reports of what it received (docs/protocol.md, "Mutate-then reports"). */
function mutability(node) {
  if (node === MISSING) return 'absent'
  if (node !== null && typeof node === 'object') return resistsEveryMutation(node) ? 'frozen' : 'mutable'
  return 'scalar'
}

/**
 * The keys of `node` as iterated: `[key, keyOrder(child)]` per own key of an object, one per array item, `null`
 * for a scalar; with an explicit stack, so a value of any depth is reported.
 */
function keyOrder(node) {
  const root = [null]
  const pending = [[node, root, 0]]
  while (pending.length > 0) {
    const [current, parent, slot] = pending.pop()
    if (Array.isArray(current)) {
      const items = new Array(current.length).fill(null)
      current.forEach((item, index) => pending.push([item, items, index]))
      parent[slot] = items
    } else if (current !== null && typeof current === 'object') {
      const pairs = Object.keys(current).map(key => [key, null])
      pairs.forEach(pair => pending.push([current[pair[0]], pair, 1]))
      parent[slot] = pairs
    }
  }
  return root[0]
}

/**
 * A result's value and content, as a `mutate-then` behaviour reports them: a failure has no value, and before the
 * final result its content is not tried either (the contract leaves its freezing open).
 */
function resultParts(result, final = false) {
  if (!result.isError) return { value: result.value, content: result.content }
  return { value: MISSING, content: final ? result.content : MISSING }
}

// --- the MCP fixture server ------------------------------------------------------------------------

/**
 * A scripted MCP server on a loopback Streamable HTTP endpoint (JSON responses, no event stream): it lists the
 * given tools and answers each one's raw `CallToolResult` (`response`) to every `tools/call`.
 */
async function startFixtureMcpServer(tools) {
  const byName = new Map(tools.map(tool => [tool.name, tool]))
  const answer = (request) => {
    switch (request.method) {
      case 'initialize':
        return {
          protocolVersion: request.params?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'toolcanon-fixture', version: '1.0.0' },
        }
      case 'ping':
        return {}
      case 'tools/list':
        return { tools: tools.map(({ response: _response, ...listed }) => listed) }
      case 'tools/call': {
        const tool = byName.get(request.params?.name)
        if (tool === undefined) throw Object.assign(new Error(`unknown tool ${request.params?.name}`), { code: -32602 })
        return tool.response
      }
      default:
        throw Object.assign(new Error(`method not found: ${request.method}`), { code: -32601 })
    }
  }
  const server = createServer((request, response) => {
    if (request.method !== 'POST') {
      response.writeHead(405).end()
      return
    }
    const chunks = []
    request.on('data', (chunk) => { chunks.push(chunk) })
    request.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      if (message.id === undefined) {
        response.writeHead(202).end()
        return
      }
      let outcome
      try {
        outcome = { jsonrpc: '2.0', id: message.id, result: answer(message) }
      } catch (error) {
        outcome = { jsonrpc: '2.0', id: message.id, error: { code: error.code ?? -32603, message: error.message } }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(outcome))
    })
  })
  await new Promise((resolve) => { server.listen(0, '127.0.0.1', resolve) })
  return server
}

function closeServer(server) {
  server.closeAllConnections()
  return new Promise((resolve) => { server.close(() => { resolve() }) })
}

// --- the model an agent routes to under `attachments` ----------------------------------------------

/** The route every agent has under `attachments {}`: a provider and model of the scenario's own adapter. */
const MODEL_ROUTE = Object.freeze({ provider: 'toolcanon', model: 'image-input' })

/** An LLM adapter that only describes its model: it declares text and image input, and streams nothing. */
class ScenarioModels extends LlmAdapter {
  async resolveModel(provider, model) {
    return { provider, id: model, name: model, inputModalities: ['text', 'image'] }
  }

  // oxlint-disable-next-line require-yield
  async *stream() {
    throw new Error('the scenario model is never called')
  }
}

// --- one scenario ----------------------------------------------------------------------------------

async function runScenario(scenario) {
  const missing = (scenario.requires ?? []).find(need => !CAPABILITIES.includes(need))
  if (missing !== undefined) return { skipped: `missing capability: ${missing}` }
  const kind = firstInexpressible(scenario) // a generator tag holds its exotic tags in document order too
  if (kind !== undefined) return { skipped: `not expressible: ${kind}` }
  scenario = expandGenerated(scenario) // the generator tags: the document they stand for
  const run = new ScenarioRun(scenario)
  try {
    return { transcript: writeJson(await run.run()) }
  } finally {
    await run.close()
  }
}

/** The state of one scenario run: the Context, its fixture tools and hooks, and what each step produced. */
class ScenarioRun {
  constructor(scenario) {
    this.scenario = scenario
    this.steps = new Map(scenario.steps.map(step => [step.id, step]))
    this.callIds = new Map(scenario.steps.filter(step => step.call !== undefined)
      .map(step => [step.id, step.call.callId ?? step.id]))
    this.phases = new Map() // by execution token: one entry per call
    this.observed = [] // [exec, result] in notification order
    this.results = new Map() // step id -> final result
    this.runs = new Map() // step id -> the execution that produced it
    this.controllers = new Map() // call id -> the caller's AbortController of a direct call
    this.nested = new Map() // outer execution token -> nested entries
    this.programs = new Map() // program key -> {spec, outer}: the program and the execution running it
    this.agents = new Map() // agent name -> the Agent object passed as the call's agent
    this.asking = new Map() // call id -> the execution whose listener asked last
    this.disposers = new Map() // tool name -> disposer of its last registration
    this.hookDisposers = [] // the scenario's hooks' disposers, in list order
    this.seen = new Map() // execution token -> what its mutate-then behaviours received
    this.caches = new WeakMap() // cache action -> Map of the results it keeps
    this.replacements = new Map() // execution token -> the `later` replacement controllers in place
    this.fixtures = new Map() // tool name -> the fixture behind it
    this.spilled = new Map() // locator -> spilled text
    this.issued = new Map() // attachment id the scenario's store issued -> the reference as reported
    this.notified = [] // each notification a `changeListeners` listener saw, in order
    this.bare = new Set((scenario.bare ?? []).map(stage => BARE_KEYS[stage])) // stages left uninstrumented
    this.messageIds = new Map() // generated message id -> "<callId>:result"
    this.logs = new Map() // persist or model step id -> its log, written through the JSONL backend
    this.logBackend = undefined // the JSONL backend holding the scenario's logs (see `logStore()`)
    this.logDirectory = undefined // the scenario's own folder: the backend's root and each damaged copy's
    this.damagedCopies = 0 // damaged copies of logs written so far, each under a root of its own
    this.fibers = []
    this.closers = [] // what else a run started (a fixture server), closed after its fibers
    this.unreachable = undefined
    this.ctx = undefined
  }

  async run() {
    await this.setUp()
    const registrations = await this.registerTools()
    this.installInstrumentation()
    this.installHooks()
    if (this.scenario.spill !== undefined) await this.installSpill(this.scenario.spill.maxBytes, this.scenario.spill.fail)
    if (this.scenario.timeout !== undefined) await this.plugin(TimeoutPolicy)
    const outcomes = {}
    for (const step of this.scenario.steps) {
      outcomes[step.id] = await this.runStep(step)
      if (this.unreachable !== undefined) throw new UnreachableState(this.unreachable)
    }
    const transcript = { formatVersion: FORMAT_VERSION, scenario: this.scenario.id }
    if (Object.keys(registrations).length > 0) transcript.registrations = registrations
    transcript.steps = outcomes
    if (this.scenario.changeListeners !== undefined) transcript.notified = this.notified
    return transcript
  }

  async plugin(plugin, config) {
    const fiber = await this.ctx.plugin(plugin, config)
    this.fibers.push(fiber)
    return fiber
  }

  async close() {
    const closers = [...this.fibers.reverse().map(fiber => () => fiber.dispose?.()), ...this.closers]
    for (const close of closers) {
      try {
        await close()
      } catch (error) {
        process.stderr.write(`closing the scenario failed: ${describeThrown(error)}\n`)
      }
    }
  }

  /** A fresh Context with the original's system prompt and tool registry, plus the services a scenario asks for. */
  async setUp() {
    this.ctx = new Context()
    await this.plugin(SystemPrompt)
    // `run_code`, the original's code-mode bridge, is reachable only under a code presentation; `both` keeps every
    // native tool callable and adds `run_code` to the registry view, so it is chosen only when a program runs.
    await this.plugin(ToolRuntime, this.runsPrograms() ? { mode: 'both' } : {})
    if (this.runsPrograms()) await this.plugin(this.codeRuntimeService())
    if (this.scenario.approval !== undefined) await this.plugin(this.approvalService(this.scenario.approval))
    if (this.scenario.attachments !== undefined) await this.admitImages()
  }

  /**
   * `attachments {}`: what the MCP bridge's image admission asks of a deployment (`resolveImageAdmission`): an
   * attachment store (`ctx.attachments`), and a model route from the call's agent (`options.provider` /
   * `options.model`) to a model whose metadata (`ctx.llm.resolveModelInfo`) declares image input.
   */
  async admitImages() {
    await this.plugin(LlmRuntime)
    this.ctx.llm.registerAdapter([MODEL_ROUTE.provider], new ScenarioModels())
    const issued = this.issued
    class ScenarioAttachmentStore extends AttachmentStore {
      imageLimits = {
        maxImageBytes: 1 << 30,
        maxImagesPerMessage: 1 << 10,
        maxMessageImageBytes: 1 << 30,
        maxImagePixels: 1 << 30,
        maxImageDimension: 1 << 15,
        mediaTypes: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'],
      }

      // the scenario's images are tokens, not rasters: nothing is decoded, so every image is valid
      async validateImage() {}

      async saveImage(input) {
        const attachmentId = AttachmentId(`attachment-${issued.size}`)
        issued.set(attachmentId, { mediaType: input.mediaType, bytes: input.data.byteLength })
        return { attachmentId, mediaType: input.mediaType, bytes: input.data.byteLength }
      }

      async readImage() {
        throw new Error('the scenario attachment store keeps no bytes')
      }
    }
    await this.plugin(ScenarioAttachmentStore)
  }

  runsPrograms() {
    const hasProgram = (body) => body !== undefined && (body.kind === 'program' || hasProgram(body.then))
    return Object.values(this.scenario.tools).some(tool => hasProgram(tool.body))
  }

  // --- fixture tools -------------------------------------------------------------------------------

  async registerTools() {
    const registrations = {}
    if (this.scenario.changeListener !== undefined) this.installChangeListener(this.scenario.changeListener)
    this.scenario.changeListeners?.forEach((spec, index) => { this.installChangeListener(spec, index) })
    const entries = Object.entries(this.scenario.tools)
    const mcp = entries.filter(([, spec]) => spec.mcp !== undefined)
    let mcpStarted = false
    for (const [key, spec] of entries) {
      const name = spec.name ?? key
      if (!this.fixtures.has(name)) this.fixtures.set(name, spec)
      if (spec.register === false) continue
      if (spec.mcp !== undefined) {
        if (!mcpStarted) {
          mcpStarted = true
          await this.startMcpServer(mcp.filter(([, fixture]) => fixture.register !== false), registrations)
        }
        continue
      }
      try {
        this.disposers.set(name, this.ctx.tools.register(this.definition(name, spec)))
      } catch (error) {
        setMember(registrations, key, { registerError: registrationErrorReport(error) })
        continue
      }
      this.fixtures.set(name, spec)
      if (spec.registerError === true) setMember(registrations, key, { registered: true })
    }
    return registrations
  }

  /**
   * A `tools/change` listener that throws `<message> #<n>` on the notifications n (from 1) that `raiseOn` lists; the
   * one of `changeListeners` at `index` records each notification it sees in `notified`.
   */
  installChangeListener(spec, index) {
    let notified = 0
    this.ctx.on('tools/change', () => {
      notified += 1
      if (index !== undefined) this.notified.push({ listener: index, n: notified })
      if (spec.raiseOn.includes(notified)) throw new Error(`${spec.message} #${notified}`)
    })
  }

  /** A fixture tool: `defineTool` for DSL `parameters` (or none), a raw definition for `rawParameters`. */
  definition(name, spec) {
    const output = spec.output
    const render = output?.render !== undefined ? this.renderer(output.render) : undefined
    const projector = output?.presentationMeta !== undefined ? this.projector(output.presentationMeta) : undefined
    const finalizeContent = spec.finalizeContent !== undefined ? this.finalizer(spec.finalizeContent) : undefined
    const execute = this.body(spec.body)
    const description = Object.hasOwn(spec, 'description') ? spec.description : name
    const timeout = Object.hasOwn(spec, 'timeoutMs') ? { timeoutMs: materialize(spec.timeoutMs) } : {}
    const concurrency = spec.concurrencySafe !== undefined
      ? { isConcurrencySafe: concurrencyCheck(spec.concurrencySafe) }
      : {}
    if (output !== undefined && !Object.hasOwn(spec, 'rawParameters')) {
      const defined = defineTool({
        name,
        description,
        parameters: materialize(Object.hasOwn(spec, 'parameters') ? spec.parameters : {}),
        output: {
          schema: materialize(Object.hasOwn(output, 'schema') ? output.schema : { type: 'json' }),
          render,
          ...projector !== undefined ? { presentationMeta: projector } : {},
        },
        execute,
        ...finalizeContent !== undefined ? { finalizeContent } : {},
        ...timeout,
        ...concurrency,
      })
      if (!Object.hasOwn(output, 'rawSchema')) return defined
      return { ...defined, output: { ...defined.output, schema: materialize(output.rawSchema) } }
    }
    const definition = {
      name,
      description,
      parameters: materialize(firstOwn(spec, ['rawParameters', 'parameters'], {})),
      execute,
      ...finalizeContent !== undefined ? { finalizeContent } : {},
      ...timeout,
      ...concurrency,
    }
    if (output !== undefined) {
      definition.output = {
        // a DSL schema on a raw definition is compiled as defineTool compiles it
        schema: Object.hasOwn(output, 'schema')
          ? valueSchemaSpecToJsonSchema(materialize(output.schema))
          : materialize(output.rawSchema),
        render,
        ...projector !== undefined ? { presentationMeta: projector } : {},
      }
    }
    return definition
  }

  renderer(spec) {
    switch (spec.kind) {
      case 'text': {
        const prefix = spec.prefix ?? ''
        return (_args, value) => [text(prefix + asText(value))]
      }
      case 'json':
        return (_args, value) => [text(writeJson(value, spec.indent))]
      case 'field': {
        const prefix = spec.prefix ?? ''
        return (_args, value) => [text(prefix + fieldText(value, spec.name))]
      }
      case 'blocks':
        return (_args, value) => value
      case 'constant':
      case 'exotic':
        return () => materialize(spec.content)
      case 'raise':
        return () => { throw new Error(spec.message) }
      case 'first-party':
        return this.firstPartyRender(spec.family)
      case 'mutate-then': {
        const then = this.renderer(spec.then)
        return (args, value) => {
          const report = text(JSON.stringify({ arguments: mutability(args), value: mutability(value) }))
          const content = then(args, value)
          return Array.isArray(content) ? [report, ...content] : content
        }
      }
      case 'keys':
        return (args, value) => [text(writeJsonIteratively({ arguments: keyOrder(args), value: keyOrder(value) }))]
      default:
        throw new Error(`unknown renderer kind ${JSON.stringify(spec.kind)}`)
    }
  }

  /** The original's own renderer of a first-party family, loaded before the first render. */
  firstPartyRender(family) {
    let render
    const ready = firstParty.firstPartyRenderer(family).then((found) => { render = found })
    this.pending ??= []
    this.pending.push(ready.then(() => {
      if (render === undefined) throw new UnreachableState(`no first-party renderer of the original for family "${family}"`)
    }))
    return (args, value) => render(args, value)
  }

  projector(spec) {
    switch (spec.kind) {
      case 'value': return (_args, value) => value
      case 'wrap': return (_args, value) => ({ [spec.key]: value })
      case 'constant':
      case 'exotic':
        return () => materialize(spec.value)
      case 'null': return () => null
      case 'raise': return () => { throw new Error(spec.message) }
      case 'undefined': return () => undefined
      // the declaration's presentationMeta is this value itself, which defineTool wraps as it is
      case 'not-callable': return spec.value
      case 'mutate-then': {
        const then = this.projector(spec.then)
        return (args, value) => {
          const report = { arguments: mutability(args), value: mutability(value) }
          return { seen: report, meta: then(args, value) }
        }
      }
      default: throw new Error(`unknown projector kind ${JSON.stringify(spec.kind)}`)
    }
  }

  finalizer(spec) {
    return (exec, result) => {
      this.phasesOf(exec).finalize += 1
      return this.finalizeAs(spec, exec, result)
    }
  }

  finalizeAs(spec, exec, result) {
    switch (spec.kind) {
      case 'keep': return undefined
      case 'replace': return materialize(spec.content)
      case 'truncate': return truncateFirstText(result.content, spec.chars)
      case 'mutate-then':
        this.report(exec, 'finalizeContent', { arguments: exec.arguments, ...resultParts(result, true) })
        return this.finalizeAs(spec.then, exec, result)
      default: throw new Error(spec.message)
    }
  }

  /** Record what a `mutate-then` behaviour found when it tried to mutate what it received. */
  report(exec, at, received) {
    const report = { at }
    for (const name of ['arguments', 'value', 'content']) {
      if (Object.hasOwn(received, name)) report[name] = mutability(received[name])
    }
    this.seenOf(exec).push(report)
  }

  seenOf(exec) {
    let seen = this.seen.get(exec.token)
    if (seen === undefined) {
      seen = []
      this.seen.set(exec.token, seen)
    }
    return seen
  }

  body(spec) {
    return async (args, exec) => {
      this.phasesOf(exec).body += 1
      return this.perform(spec, args, exec)
    }
  }

  /** One body behaviour; the chaining ones (`then`) go on with the next. */
  async perform(spec, args, exec) {
    switch (spec.kind) {
      case 'return':
        return materialize(spec.value)
      case 'return-arg':
        if (isRecord(args) && Object.hasOwn(args, spec.arg)) return args[spec.arg]
        return Object.hasOwn(spec, 'default') ? materialize(spec.default) : null
      case 'raise':
        throw behaviourError(spec)
      case 'defer':
        for (const context of spec.contexts) exec.deferContext(contextMessage(context))
        break
      case 'conclude':
        exec.concludeTurn()
        break
      case 'await-abort': {
        const signal = exec.signal
        if (!signal.aborted) await new Promise((resolve) => { signal.addEventListener('abort', resolve, { once: true }) })
        break
      }
      case 'abort-caller':
        this.abortCaller(exec.callId)
        break
      case 'program':
        return this.runProgram(spec, exec)
      case 'mutate-then':
        this.report(exec, 'body', { arguments: args })
        break
      case 'abort-replacement':
        this.replacements.get(exec.token)?.at(-1)?.abort('replaced by a wrapper')
        break
      case 'report-signal':
        this.seenOf(exec).push({ at: 'body', signal: signalReport(exec.signal) })
        break
      default:
        throw new Error(`unknown body kind ${JSON.stringify(spec.kind)}`)
    }
    return this.perform(spec.then, args, exec)
  }

  // --- nested dispatch through the original's run_code bridge ----------------------------------------

  /**
   * A `program` body: the original's `run_code` transport executes it for this very call (its execution is the
   * bridge's parent), so every nested call is the bridge's own sub-dispatch `<callId>:code:<n>`, with its argument
   * normalization, run signal, ordered scheduling, code-dispatch events and forwarding to this call's result.
   */
  async runProgram(spec, exec) {
    const runCode = this.ctx.tools.get('run_code')
    if (runCode === undefined) throw new Error('the run_code transport is not in the registry view')
    const key = `program:${this.programs.size}`
    this.programs.set(key, { spec, outer: exec })
    this.nested.set(exec.token, [])
    const output = await runCode.execute({ code: key, description: 'scenario program' }, exec)
    return Object.hasOwn(output, 'result') ? output.result : null
  }

  /** The scenario's code runtime: runs a program's calls in order against the bridge's `tools` bindings. */
  codeRuntimeService() {
    const run = this
    return class ScenarioCodeRuntime extends CodeRuntime {
      language = 'typescript'
      isolation = 'in-process'

      async run(request) {
        return run.runRequest(request)
      }
    }
  }

  /** One `CodeRuntime.run` request: the seam's contract (abort resolves as a failure of kind `abort`). */
  async runRequest(request) {
    const program = this.programs.get(request.program)
    if (program === undefined) return { logs: [], error: { kind: 'exception', message: `no program ${request.program}` } }
    const signal = request.signal
    const abortFailure = () => ({ logs: [], error: { kind: 'abort', message: String(signal.reason) } })
    if (signal?.aborted) return abortFailure()
    const tools = request.bindings.find(namespace => namespace.global === 'tools')?.functions ?? {}
    const stopped = { value: false }
    const aborted = new Promise((resolve) => {
      signal?.addEventListener('abort', () => { stopped.value = true; resolve(abortFailure()) }, { once: true })
    })
    const completed = this.interpret(program, tools, stopped).then(
      value => ({ logs: [], value }),
      error => ({ logs: [], error: { kind: 'exception', message: describeThrown(error) } }),
    )
    return Promise.race([completed, aborted])
  }

  async interpret({ spec, outer }, tools, stopped) {
    const entries = this.nested.get(outer.token)
    const received = []
    for (const call of spec.calls) {
      if (stopped.value) break
      const binding = Object.hasOwn(tools, call.name) ? tools[call.name] : undefined
      if (binding === undefined) {
        this.unreachable ??= `a program calls "${call.name}", which the original's run_code bridge has no binding for: `
          + 'it binds only the tools visible when the run starts (code-mode.ts, `registry.schemas(exec.agent)`), '
          + 'so a never-registered name cannot be dispatched as a nested call'
        throw new TypeError(`tools.${call.name} is not a function`)
      }
      const seen = this.observed.length
      let got
      try {
        got = { value: await binding(materialize(call.arguments)) }
      } catch (error) {
        got = { error: describeThrown(error) }
      }
      received.push(got)
      const entry = { received: got }
      for (const [exec, result] of this.observed.slice(seen)) {
        if (exec.parent === outer.token) {
          entry.result = resultReport(result, this.issued)
          entry.phases = this.phasesReport(exec)
          if (this.seen.has(exec.token)) entry.seen = this.seen.get(exec.token)
        }
      }
      entries.push(entry)
    }
    return programResult(spec.result, received)
  }

  // --- MCP fixtures through the original's MCP bridge ------------------------------------------------

  /** One scripted MCP server for the scenario's MCP fixtures, connected through `@deepseek-ai/dsh-mcp-client`. */
  async startMcpServer(fixtures, registrations) {
    const listed = fixtures.map(([key, spec]) => {
      const { response, ...tool } = spec.mcp
      return {
        name: spec.name ?? key,
        description: spec.description ?? spec.name ?? key,
        inputSchema: { type: 'object' },
        ...materialize(tool),
        response: materialize(response),
      }
    })
    const server = await startFixtureMcpServer(listed)
    this.closers.push(() => closeServer(server))
    const before = new Set(this.ctx.tools.schemas().map(schema => schema.name))
    // the client keeps its registrations' disposers to itself: the ones it takes while starting are kept by
    // name here too, so that a hook disposing an MCP tool (dispose-tool-then) disposes its registration
    const tools = this.ctx.tools
    const register = tools.register
    tools.register = (definition, ...rest) => {
      const dispose = register.call(tools, definition, ...rest)
      this.disposers.set(definition.name, dispose)
      return dispose
    }
    try {
      await this.plugin(McpClient, {
        transport: 'streamable-http',
        serverName: 'fixture',
        url: `http://127.0.0.1:${server.address().port}/mcp`,
        failOnStartupError: true,
        reconnect: { enabled: false },
      })
    } catch (error) {
      for (const [key] of fixtures) setMember(registrations, key, { registerError: registrationErrorReport(error.cause ?? error) })
      return
    } finally {
      tools.register = register
    }
    const added = this.ctx.tools.schemas().map(schema => schema.name).filter(name => !before.has(name))
    // the bridge registers each fixture as `mcp__fixture__<key or name>`, the name a call step gives
    added.forEach((publicName, index) => {
      const [key, spec] = fixtures[index]
      this.fixtures.set(publicName, spec)
      if (spec.registerError === true) setMember(registrations, key, { registered: true })
      // the bridge's execute stage is the fixture's body: counted on the definition the bridge registered
      const definition = this.ctx.tools.get(publicName)
      const execute = definition.execute
      definition.execute = (args, exec) => {
        this.phasesOf(exec).body += 1
        return execute(args, exec)
      }
    })
  }

  // --- spill -----------------------------------------------------------------------------------------

  /**
   * The original's spill policy over an in-memory spill store that keeps each text at `spill/<callId>.txt`; with
   * `fail`, a store whose `saveText` throws synchronously (`raise`) or answers a rejected promise (`reject`) for
   * the calls `fail` names, or for every call.
   */
  async installSpill(maxBytes, fail) {
    const spilled = this.spilled
    const failing = fail?.calls === undefined ? undefined : new Set(fail.calls.map(name => this.callIds.get(name) ?? name))
    class ScenarioSpillStore extends SpillStore {
      saveText(input) {
        const callId = input.source.callId
        if (fail !== undefined && (failing === undefined || failing.has(callId))) {
          if (fail.how === 'raise') throw new Error(`spill store failed for ${callId}`)
          return Promise.reject(new Error(`spill store rejected ${callId}`))
        }
        const locator = SpillLocator(`spill/${callId}.txt`)
        spilled.set(locator, input.content)
        return Promise.resolve({ locator, bytes: Buffer.byteLength(input.content, 'utf8'), retrievalHint: 'Use the read tool to view it.' })
      }
    }
    await this.plugin(ScenarioSpillStore)
    await this.plugin(SpillPolicy, { maxInlineBytes: maxBytes })
  }

  // --- approval --------------------------------------------------------------------------------------

  /** The `approval` service the registry consults for an `ask`: it answers every request with `outcome`. */
  approvalService(spec) {
    const run = this
    return class ScenarioApproval extends Service {
      constructor(ctx) {
        super(ctx, 'approval')
      }

      async request(request) {
        if (spec.abortCaller === true) run.abortCaller(request.callId)
        if (spec.report === true) run.reportApproval(request)
        return spec.outcome
      }
    }
  }

  /** Record, in the asked call's `seen`, what the approval service was asked and the signal it was handed. */
  reportApproval(request) {
    const text = value => typeof value === 'string' ? value : null
    const asked = {
      agent: text(request.agent?.name),
      toolName: text(request.toolName),
      callId: text(request.callId),
      reason: text(request.reason),
    }
    const exec = this.asking.get(request.callId)
    const report = { at: 'approval', request: asked, signal: signalReport(request.signal) }
    if (exec !== undefined) this.seenOf(exec).push(report)
  }

  /** Abort the caller's signal: a direct call's own; a nested call's caller is its program's caller, the outer call. */
  abortCaller(callId) {
    let id = callId
    while (!this.controllers.has(id)) {
      const nested = NESTED_CALL_ID.exec(id)
      if (nested === null) return
      id = nested.groups.outer
    }
    this.controllers.get(id).abort('aborted by the caller')
  }

  dispose(name) {
    this.disposers.get(name)?.()
  }

  // --- hooks -----------------------------------------------------------------------------------------

  phasesOf(exec) {
    let phases = this.phases.get(exec.token)
    if (phases === undefined) {
      phases = newPhases()
      this.phases.set(exec.token, phases)
    }
    return phases
  }

  phasesReport(exec) {
    const fixture = this.fixtures.get(exec.name)
    return phasesReport(this.phasesOf(exec), fixture !== undefined && fixture.finalizeContent !== undefined, this.bare)
  }

  /**
   * One pass-through hook per stage, installed before the scenario's hooks, hence outermost; none for the stages the
   * scenario lists as `bare`, whose registry then has no hook of that stage unless the scenario installs one.
   */
  installInstrumentation() {
    const ctx = this.ctx
    if (!this.bare.has('pre')) {
      ctx.on('tools/pre-execute', async (exec, next) => {
        this.phasesOf(exec).pre += 1
        return next()
      })
    }
    if (!this.bare.has('guard')) {
      ctx.tools.guard((exec) => {
        this.phasesOf(exec).guard += 1
        return undefined
      })
    }
    if (!this.bare.has('execute')) {
      ctx.on('tools/execute', async (exec, next) => {
        this.phasesOf(exec).execute += 1
        return next()
      })
    }
    if (!this.bare.has('post')) {
      ctx.on('tools/post-execute', async (exec, _result, next) => {
        this.phasesOf(exec).post += 1
        return next()
      })
    }
    ctx.on('tools/result', (exec, result) => {
      this.phasesOf(exec).observed += 1
      this.observed.push([exec, result])
    })
  }

  installHooks() {
    const ctx = this.ctx
    for (const hook of this.scenario.hooks ?? []) {
      const applies = this.filter(hook.steps)
      const action = hook.action
      switch (hook.stage) {
        case 'pre-execute':
          this.hookDisposers.push(ctx.on('tools/pre-execute', async (exec, next) => applies(exec) ? this.preExecuteDecision(action, exec) : next()))
          break
        case 'guard':
          this.hookDisposers.push(ctx.tools.guard(exec => applies(exec) ? this.guardReason(action, exec) : undefined))
          break
        case 'execute':
          this.hookDisposers.push(ctx.on('tools/execute', async (exec, next) => applies(exec) ? this.around(action, exec, next) : next()))
          break
        case 'post-execute':
          this.hookDisposers.push(ctx.on('tools/post-execute', async (exec, result, next) => applies(exec) ? this.postExecuteDecision(action, exec, result) : next()))
          break
        default:
          this.hookDisposers.push(ctx.on('tools/result', (exec, result) => {
            if (applies(exec)) return this.observe(action, exec, result)
          }))
      }
    }
  }

  guardReason(action, exec) {
    switch (action.kind) {
      case 'pass': return undefined
      case 'deny': return materialize(action.reason)
      case 'mutate-then':
        this.report(exec, 'guard', { arguments: exec.arguments })
        return this.guardReason(action.then, exec)
      default: throw behaviourError(action)
    }
  }

  /** A hook's step filter: a step id names that step's call; anything else is a (nested) call id. */
  filter(names) {
    if (names === undefined) return () => true
    const callIds = new Set(names.map(name => this.callIds.get(name) ?? name))
    return exec => callIds.has(exec.callId)
  }

  preExecuteDecision(action, exec) {
    switch (action.kind) {
      case 'allow': return { kind: 'allow' }
      case 'deny': return { kind: 'deny', reason: materialize(action.reason) }
      case 'ask':
        this.asking.set(exec.callId, exec)
        return { kind: 'ask', ...Object.hasOwn(action, 'reason') ? { reason: action.reason } : {} }
      case 'abort-caller':
        this.abortCaller(exec.callId)
        return this.preExecuteDecision(action.then, exec)
      case 'mutate-then':
        this.report(exec, 'pre-execute', { arguments: exec.arguments })
        return this.preExecuteDecision(action.then, exec)
      default: throw behaviourError(action)
    }
  }

  async around(action, exec, next) {
    switch (action.kind) {
      case 'passthrough':
        return next()
      case 'short-circuit-success':
        return {
          isError: false,
          value: materialize(action.value),
          content: Object.hasOwn(action, 'content') ? materialize(action.content) : [],
          ...Object.hasOwn(action, 'meta') ? { meta: materialize(action.meta) } : {},
          ...Object.hasOwn(action, 'additionalContexts') ? { additionalContexts: contextMessages(action) } : {},
        }
      case 'short-circuit-failure': {
        const error = { message: action.error.message }
        if (action.error.info !== undefined) error.info = { name: action.error.info.name, code: action.error.info.code }
        return {
          isError: true,
          error,
          content: materialize(action.content),
          ...Object.hasOwn(action, 'meta') ? { meta: materialize(action.meta) } : {},
          ...Object.hasOwn(action, 'additionalContexts') ? { additionalContexts: contextMessages(action) } : {},
        }
      }
      case 'return-result-of':
        return this.results.get(action.step)
      // a new object holding the very fields of a result: every field right, but not an object the registry built
      case 'look-alike': {
        const copied = { ...Object.hasOwn(action, 'step') ? this.results.get(action.step) : await next() }
        if (Object.hasOwn(action, 'content')) copied.content = materialize(action.content)
        return copied
      }
      case 'spread': {
        const result = await next()
        return { ...result, additionalContexts: [...result.additionalContexts ?? [], ...contextMessages(action)] }
      }
      case 'replace-signal-aborted': {
        const replaced = new AbortController()
        const later = action.later === true
        // a `later` replacement is aborted only when the body asks for it (abort-replacement)
        if (later) {
          if (!this.replacements.has(exec.token)) this.replacements.set(exec.token, [])
          this.replacements.get(exec.token).push(replaced)
        } else {
          replaced.abort('replaced by a wrapper')
        }
        const saved = exec.signal
        exec.signal = replaced.signal
        try {
          return await next()
        } finally {
          exec.signal = saved
          if (later) {
            const pending = this.replacements.get(exec.token)
            pending.splice(pending.lastIndexOf(replaced), 1)
          }
        }
      }
      case 'abort-caller-after-next': {
        const result = await next()
        this.abortCaller(exec.callId)
        return result
      }
      case 'dispose-tool-then':
        this.dispose(exec.name)
        return this.around(action.then, exec, next)
      case 'cache': {
        let kept = this.caches.get(action)
        if (kept === undefined) {
          kept = new Map()
          this.caches.set(action, kept)
        }
        const key = JSON.stringify([exec.callId, exec.name, JSON.stringify(exec.arguments)])
        if (!kept.has(key)) kept.set(key, await next())
        return kept.get(key)
      }
      case 'mutate-then':
        this.report(exec, 'execute', { arguments: exec.arguments })
        return this.around(action.then, exec, async () => {
          const result = await next()
          this.report(exec, 'next', resultParts(result))
          return result
        })
      default:
        throw behaviourError(action)
    }
  }

  postExecuteDecision(action, exec, result) {
    const contexts = Object.hasOwn(action, 'additionalContexts') ? { additionalContexts: contextMessages(action) } : {}
    switch (action.kind) {
      case 'accept': return { kind: 'accept', ...contexts }
      case 'accept-content': return { kind: 'accept', content: materialize(action.content), ...contexts }
      case 'accept-value': return { kind: 'accept', value: materialize(action.value), ...contexts }
      case 'accept-both': return { kind: 'accept', content: materialize(action.content), value: materialize(action.value) }
      case 'block': return { kind: 'block', feedback: materialize(action.feedback), ...contexts }
      case 'abort-caller':
        this.abortCaller(exec.callId)
        return this.postExecuteDecision(action.then, exec, result)
      case 'dispose-tool-then':
        this.dispose(exec.name)
        return this.postExecuteDecision(action.then, exec, result)
      case 'mutate-then':
        this.report(exec, 'post-execute', { arguments: exec.arguments, ...resultParts(result) })
        return this.postExecuteDecision(action.then, exec, result)
      case 'report-signal':
        this.seenOf(exec).push({ at: 'post-execute', signal: signalReport(exec.signal) })
        return this.postExecuteDecision(action.then, exec, result)
      default: throw behaviourError(action)
    }
  }

  /** A result observer's action; `later` returns at once a promise that acts as `then` once it settles. */
  observe(action, exec, result) {
    switch (action.kind) {
      case 'mutate':
        this.report(exec, 'result-observer', { arguments: exec.arguments, ...resultParts(result, true) })
        return undefined
      case 'later':
        return Promise.resolve().then(() => this.observe(action.then, exec, result))
      default:
        throw behaviourError(action)
    }
  }

  // --- steps -----------------------------------------------------------------------------------------

  async runStep(step) {
    if (this.pending !== undefined) await Promise.all(this.pending.splice(0))
    if (step.call !== undefined) return this.call(step)
    if (step.probe !== undefined) return { frozen: this.probe(step.probe) }
    if (step.persist !== undefined) {
      try {
        return await this.persist(step.id, step.persist)
      } catch (error) {
        // the original may fail to make a result's message (a RangeError of structuredClone, for deep content)
        return { error: { name: contractErrorName(error), message: describeThrown(error) } }
      }
    }
    if (step.modelStep !== undefined) return this.modelStep(step)
    if (step.replay !== undefined) {
      if (step.replay.damage !== undefined) return this.replayDamaged(step.replay.persist, step.replay.damage)
      return this.replay(step.replay.persist)
    }
    if (step.executionMode !== undefined) {
      const spec = step.executionMode
      return { mode: this.ctx.tools.executionMode({ name: spec.name, arguments: materialize(spec.arguments) }).kind }
    }
    if (step.removeHook !== undefined) {
      this.hookDisposers[step.removeHook.hook]()
      return { removed: true }
    }
    if (step.reopen !== undefined) return this.reopen(step.id, step.reopen)
    return this.schemas()
  }

  agent(name) {
    let agent = this.agents.get(name)
    if (agent === undefined) {
      const options = this.scenario.attachments !== undefined ? { ...MODEL_ROUTE } : {}
      agent = { name, options, session: Session.create(SessionId(`agent-${this.agents.size}`)) }
      this.agents.set(name, agent)
    }
    return agent
  }

  async call(step) {
    const spec = step.call
    const callId = spec.callId ?? step.id
    const controller = new AbortController()
    this.controllers.set(callId, controller)
    if (step.abort === 'before') controller.abort('aborted before the call')
    const result = await this.ctx.tools.execute({
      callId,
      name: spec.name,
      arguments: materialize(spec.arguments),
      signal: controller.signal,
      ...spec.agent !== undefined ? { agent: this.agent(spec.agent) } : {},
    })
    await new Promise(resolve => setImmediate(resolve)) // the observers that settle later run before the report
    const observed = this.observed.findLast(([, final]) => final === result)
    if (observed === undefined) throw new Error(`the result of call "${step.id}" was never observed by tools/result`)
    const [exec] = observed
    this.results.set(step.id, result)
    this.runs.set(step.id, exec)
    const report = { result: resultReport(result, this.issued), phases: this.phasesReport(exec) }
    if (this.nested.has(exec.token)) report.nested = this.nested.get(exec.token)
    if (this.seen.has(exec.token)) report.seen = this.seen.get(exec.token)
    return report
  }

  probe(spec) {
    const result = this.results.get(spec.step)
    let node
    if (spec.target === 'arguments') node = this.runs.get(spec.step).arguments
    else if (spec.target === 'content') node = result.content
    else node = result.isError ? MISSING : result.value
    for (const element of spec.path) node = child(node, element)
    if (node === MISSING || node === null || typeof node !== 'object') return null
    return resistsEveryMutation(node)
  }

  /**
   * The durable events of some calls appended to a fresh Session, as the original's agent loop appends them, and
   * written to the scenario's JSONL backend. A call whose result cannot be appended (the original fails to make
   * a deep result's message) leaves the events before it, which are written all the same: the loop's semantic
   * checkpoint makes a call's `tool/call` durable before the tool runs, so they are what the log holds.
   */
  async persist(persistId, spec) {
    const session = Session.create(SessionId(`persist-${persistId}`))
    const rawArguments = spec.rawArguments ?? {}
    let failure
    try {
      this.appendCalls(session, spec.steps, rawArguments)
    } catch (error) {
      failure = error
    }
    const log = await this.writeLog(persistId, session)
    if (failure !== undefined) throw failure
    const outcome = { events: await this.loggedEvents(log) }
    if (spec.bytes === true) {
      outcome.lines = logFile(readFileSync(log.path)).lines.map(line => this.stableText(dataText(line.toString('utf8'))))
    }
    return outcome
  }

  /**
   * A model's tool calls run as one step on a fresh Session, as the original's agent loop runs a step of
   * exclusive calls (`executeToolCalls`, packages/core/agent-loop/src/tool-calls.ts, which the published
   * `@deepseek-ai/dsh-agent-loop` does not export; README.md, "Model steps", maps each step to its lines):
   * the raw text parsed (`""` is `{}`, text that is not JSON stays a string), `tool/call` appended when a call
   * starts, `tool/result` when it settles, and once the step's signal is aborted every later call recorded
   * with a synthetic `ABORTED_BEFORE_DISPATCH` result, never dispatched. The step's agent, when it has one,
   * holds the step's Session, so the bridge's code-dispatch events join the log between a call and its result.
   */
  async modelStep(step) {
    const spec = step.modelStep
    const session = Session.create(SessionId(`step-${step.id}`))
    const controller = new AbortController()
    for (const call of spec.calls) this.controllers.set(call.callId, controller)
    if (step.abort === 'before') controller.abort('aborted before the call')
    const agent = spec.agent === undefined ? {} : { agent: { ...this.agent(spec.agent), session } }
    const contexts = []
    let concludesTurn = false
    for (const call of spec.calls) {
      const started = !controller.signal.aborted
      const callEvent = session.append('tool/call', {
        turn: 1, step: 1, callId: call.callId, name: call.name, arguments: call.arguments,
      })
      const result = started
        ? await this.ctx.tools.execute({
          callId: call.callId,
          name: call.name,
          arguments: parseModelArguments(call.arguments),
          signal: controller.signal,
          ...agent,
        })
        : abortedBeforeDispatch()
      this.appendToolResult(session, call.callId, result, callEvent.seq)
      for (const context of result.additionalContexts ?? []) contexts.push(contextReport(context))
      concludesTurn ||= result.concludesTurn === true
    }
    const log = await this.writeLog(step.id, session)
    return {
      events: await this.loggedEvents(log),
      contexts,
      concludesTurn,
    }
  }

  /** The durable events of some call steps appended to a Session as the original's agent loop appends them. */
  appendCalls(session, stepIds, rawArguments) {
    for (const stepId of stepIds) {
      const call = this.steps.get(stepId).call
      const callId = this.callIds.get(stepId)
      const raw = Object.hasOwn(rawArguments, stepId) ? rawArguments[stepId] : writeJson(call.arguments)
      const callEvent = session.append('tool/call', { turn: 1, step: 1, callId, name: call.name, arguments: raw })
      for (const event of this.dispatchEvents(callId)) session.append(event.type, event.data)
      this.appendToolResult(session, callId, this.results.get(stepId), callEvent.seq)
    }
  }

  /**
   * Reopen a copy of a persisted log for appending, as a resume does, and append the durable events of some call
   * steps: the copy (damaged first) is written as the same session under a root of its own; the backend restores
   * it as resume restores it (`prepare(id)`, refusing it as a replay does); the events are appended to the restored
   * Session, and its unpublished suffix (the restore's own seed marker, then the appended events) is written
   * through the service API (`append(id, events)`, which commits the restore's crash repair first, cutting a torn
   * tail); the answer is the messages derived from the log then, with the first line the repair cut.
   */
  async reopen(reopenId, spec) {
    const log = this.logs.get(spec.persist)
    const { root, path, written, lines, tail } = this.damagedCopy(log, spec.damage)
    const backend = await JsonlLogs.open(root)
    this.closers.unshift(() => backend.close())
    this.logs.set(reopenId, { id: log.id, root, path, backend }) // a later step may name it, refused or not
    let preparation
    try {
      preparation = await backend.persistence.prepare(log.id)
    } catch (error) {
      return { refused: { line: refusedLine(error) } }
    }
    const session = preparation.session
    let suffix
    try {
      const { events: durable } = await backend.persistence.readFrom(log.id, 0)
      this.appendCalls(session, spec.steps, {})
      suffix = session.events.slice(durable.length)
    } catch (error) {
      return { error: { name: contractErrorName(error), message: describeThrown(error) } }
    } finally {
      preparation[Symbol.dispose]() // the reservation ends before the append adopts the log
    }
    await backend.persistence.append(log.id, suffix)
    let messages
    try {
      messages = await backend.restoredMessages(log.id)
    } catch (error) {
      return { refused: { line: refusedLine(error) } } // what was appended made the log one the reader refuses
    }
    const outcome = {}
    const kept = keptLines(written, readFileSync(path))
    if (kept < lines.length || tail.length > 0) outcome.repaired = { line: kept + 1 }
    outcome.messages = messages.map(message => this.stableMessage(message))
    return outcome
  }

  /** Append a call's `tool/result` as the original's agent loop does, citing its `tool/call` line. */
  appendToolResult(session, callId, result, callSeq) {
    const message = createToolResultMessage({ callId, content: result.content, isError: result.isError })
    this.messageIds.set(message.id, `${callId}:result`)
    session.append('tool/result', {
      turn: 1,
      step: 1,
      message,
      ...result.error?.info ? { error: result.error.info } : {},
      ...result.meta !== undefined ? { meta: result.meta } : {},
    }, { surfaceOp: 'append', sourceEventSeqs: [callSeq] })
  }

  /**
   * The scenario's JSONL backend, `@deepseek-ai/dsh-session-persistence-jsonl` in raw mode, over a folder of the
   * scenario's own (removed with it), opened on first use.
   */
  async logStore() {
    if (this.logBackend === undefined) {
      const directory = mkdtempSync(join(tmpdir(), 'toolcanon-dsh-logs-'))
      this.closers.push(() => rmSync(directory, { recursive: true, force: true }))
      this.logDirectory = directory
      this.logBackend = await JsonlLogs.open(join(directory, 'logs'))
      this.closers.unshift(() => this.logBackend.close())
    }
    return this.logBackend
  }

  /**
   * A session's events written to the scenario's backend through its service API, `create(header)` then one
   * `append(id, events)`, the durable append of a write-behind batch: the file holds the backend's header line
   * and one line per event.
   */
  async writeLog(stepId, session) {
    const backend = await this.logStore()
    const header = session.header
    await backend.persistence.create(header)
    await backend.persistence.append(header.id, session.events)
    const log = { id: header.id, root: backend.root, path: backend.persistence.locate(header).path }
    this.logs.set(stepId, log)
    return log
  }

  /** Each event of a log as the backend reads it back (`readFrom(id, 0)`): type and data, message ids made stable. */
  async loggedEvents(log) {
    const { events } = await this.logBackend.persistence.readFrom(log.id, 0)
    return events.map(event => ({ type: event.type, data: this.stableIds(event.data) }))
  }

  /** A line's data text with each generated message id's literal replaced by `"<callId>:result"`'s. */
  stableText(text) {
    for (const [generated, stable] of this.messageIds) {
      text = text.replaceAll(JSON.stringify(generated), JSON.stringify(stable))
    }
    return text
  }

  /** A copy of a persisted log in a folder of its own, damaged as `damage` says (none: as it is): where it is,
   * the bytes written, and the lines and torn tail the damage left. */
  damagedCopy(log, damage) {
    const { header, lines: source } = logFile(readFileSync(log.path))
    const { lines, tail } = damage !== undefined ? damageLines(source, damage) : { lines: source, tail: Buffer.alloc(0) }
    const root = join(this.logDirectory, `damaged-${this.damagedCopies++}`)
    const path = join(root, relative(log.root, log.path))
    mkdirSync(dirname(path), { recursive: true })
    const written = Buffer.concat([...[header, ...lines].flatMap(line => [line, NEWLINE]), tail])
    writeFileSync(path, written)
    return { root, path, written, lines, tail }
  }

  /**
   * Replay a damaged copy of a persisted log through the original's JSONL backend: the event lines of the log
   * file (those after the backend's header line) damaged, written as the same session under a root of its own,
   * restored as a resume restores it (`prepare(id)`: the backend's scan of the file, its crash repair committed,
   * the coordinator's validation into `Session.fromRestore`), and the messages derived from that Session. A
   * refusal answers the line the backend's error names; a restore that cut lines off the file (a torn tail, or a
   * defect the backend tolerates and every line after it) answers `torn`, the first line it cut.
   */
  async replayDamaged(persistId, damage) {
    const log = this.logs.get(persistId)
    const { root, path, written, lines, tail } = this.damagedCopy(log, damage)
    const backend = await JsonlLogs.open(root)
    try {
      let messages
      try {
        messages = await backend.restoredMessages(log.id)
      } catch (error) {
        return { refused: { line: refusedLine(error) } }
      }
      const outcome = { messages: messages.map(message => this.stableMessage(message)) }
      const kept = keptLines(written, readFileSync(path))
      if (kept < lines.length || tail.length > 0) outcome.torn = { line: kept + 1 }
      return outcome
    } finally {
      await backend.close()
    }
  }

  /** The code-dispatch events the bridge appended to an agent's session for the nested calls of one root call. */
  dispatchEvents(rootCallId) {
    const events = []
    for (const agent of this.agents.values()) {
      for (const event of agent.session.events) {
        if (event.type.startsWith('tool/code-dispatch') && event.data.rootCallId === rootCallId) events.push(event)
      }
    }
    return events
  }

  /** The messages derived from a persisted log alone, restored from the scenario's backend as resume restores it. */
  async replay(persistId) {
    const log = this.logs.get(persistId)
    let messages
    try {
      messages = await (log.backend ?? this.logBackend).restoredMessages(log.id)
    } catch (error) {
      return { refused: { line: refusedLine(error) } } // a reopened log may be one the reader refuses
    }
    return { messages: messages.map(message => this.stableMessage(message)) }
  }

  stableIds(data) {
    if (isRecord(data) && Object.hasOwn(data, 'message')) return { ...data, message: this.stableMessage(data.message) }
    return data
  }

  stableMessage(message) {
    if (isRecord(message) && this.messageIds.has(message.id)) return { ...message, id: this.messageIds.get(message.id) }
    return message
  }

  schemas() {
    try {
      const schemas = this.ctx.tools.schemas()
      // `run_code` is this adapter's own transport for programs (`mode: 'both'`, see `setUp`), no tool of the
      // scenario's: a registry without a code presentation lists only the registered tools
      return { schemas: this.runsPrograms() ? schemas.filter(schema => schema.name !== 'run_code') : schemas }
    } catch (error) {
      return { error: { name: contractErrorName(error), message: describeThrown(error) } }
    }
  }
}

// --- the agent loop's step ----------------------------------------------------------------------------

/** The model's raw argument text as the original's agent loop parses it (`parseArguments`, digest 2.6). */
function parseModelArguments(raw) {
  try {
    return raw ? JSON.parse(raw) : {}
  } catch {
    return raw
  }
}

/** The synthetic result the original's agent loop records for a call never started after an abort (digest 9.1). */
function abortedBeforeDispatch() {
  return {
    content: [{ type: 'text', text: 'Error: tool call aborted before dispatch' }],
    isError: true,
    error: {
      message: 'tool call aborted before dispatch',
      info: { name: 'AbortError', code: TOOL_ABORTED_BEFORE_DISPATCH },
    },
  }
}

// --- the log's lines -------------------------------------------------------------------------------

const NEWLINE = Buffer.from('\n')

/**
 * The original's JSONL session-persistence backend over one root: a Context holding the in-memory session store
 * the backend injects (`sessions`, `@deepseek-ai/dsh-session`) and `@deepseek-ai/dsh-session-persistence-jsonl`
 * loaded as a plugin in raw mode (`compression: 'none'`: newline-delimited UTF-8 text), as the original's own
 * tests load it (packages/session/session-persistence-jsonl/tests/jsonl.spec.ts).
 */
class JsonlLogs {
  static async open(root) {
    const ctx = new Context()
    await ctx.plugin(SessionStore)
    const fiber = await ctx.plugin(JsonlSessionPersistence, { root, compression: 'none' })
    if (ctx.sessionPersistence === undefined) throw new Error('the JSONL session-persistence backend did not start')
    return new JsonlLogs(root, ctx.sessionPersistence, fiber)
  }

  constructor(root, persistence, fiber) {
    this.root = root
    this.persistence = persistence
    this.fiber = fiber
  }

  /** A stored session restored as resume restores it (`prepare(id)`), and the messages that Session derives. */
  async restoredMessages(id) {
    const preparation = await this.persistence.prepare(id)
    try {
      return preparation.session.deriveMessages()
    } finally {
      preparation[Symbol.dispose]()
    }
  }

  async close() {
    await this.fiber.dispose()
  }
}

/** A raw log file's header line and its event lines, each without its newline (the file ends with one). */
function logFile(bytes) {
  const pieces = []
  let start = 0
  for (let end = bytes.indexOf(0x0A); end !== -1; end = bytes.indexOf(0x0A, start)) {
    pieces.push(bytes.subarray(start, end))
    start = end + 1
  }
  if (start !== bytes.length) throw new Error('the log file does not end with a newline')
  const [header, ...lines] = pieces
  return { header, lines }
}

/** How many event lines of a log file the backend's restore left in place (its header line not counted). */
function keptLines(before, after) {
  let same = 0
  while (same < before.length && same < after.length && before[same] === after[same]) same += 1
  let lines = 0
  for (let index = 0; index < same; index += 1) if (before[index] === 0x0A) lines += 1
  return lines - 1
}

/**
 * The line a refusal of the backend names, counted as the format counts a log's lines (its events, from 1): the
 * backend's scanner says `at line <n>`, counting the event lines after the header; the coordinator names an event
 * by its restored seed `index <i>` or its `seq <s>`, which is line `i + 1` or `s + 1` (`seq` counts from 0).
 */
function refusedLine(error) {
  const messages = []
  for (let cause = error; cause instanceof Error; cause = cause.cause) messages.push(cause.message)
  const text = messages.length > 0 ? messages.join('\n') : describeThrown(error)
  const line = /\bat line (\d+)\b/.exec(text)
  if (line !== null) return Number(line[1])
  const event = /\b(?:index|seq) (\d+)\b/.exec(text)
  if (event !== null) return Number(event[1]) + 1
  throw new Error(`the JSONL backend refused the log without naming a line: ${text}`)
}

/** The text of a line's `data` member, exactly as the line holds it. */
function dataText(line) {
  const text = JSON.stringify(JSON.parse(line).data)
  if (!line.includes(`"data":${text}`)) throw new Error(`a log line does not hold its data as written: ${line}`)
  return text
}

/** A log's event lines damaged as a `replay` step's `damage` says (lines counted from 1), and the torn tail. */
function damageLines(source, damage) {
  const lines = [...source]
  const index = (damage.line ?? 1) - 1
  if (damage.how !== 'append' && !(index >= 0 && index < lines.length - (damage.how === 'reorder' ? 1 : 0))) {
    throw new Error(`damage "${damage.how}" names line ${index + 1} of a log of ${lines.length} lines`)
  }
  let tail = Buffer.alloc(0)
  switch (damage.how) {
    case 'torn-last-line': {
      const last = lines.pop()
      tail = last.subarray(0, Math.floor(last.length / 2))
      break
    }
    case 'malformed-line': lines[index] = Buffer.from('not json'); break
    case 'drop': lines.splice(index, 1); break
    case 'duplicate': lines.splice(index, 0, lines[index]); break
    case 'reorder': [lines[index], lines[index + 1]] = [lines[index + 1], lines[index]]; break
    case 'append':
      for (const { type, data, ignorable } of damage.events) {
        const seq = lines.length // the backend's seq counts a log's events from 0
        // a tool/result enters the surface as the agent loop appends it, citing its call's line when there is one
        const call = type === 'tool/result'
          ? lines.map(line => JSON.parse(line.toString('utf8'))).findLast(event => event.type === 'tool/call'
            && event.data.callId === data?.message?.source?.callId)
          : undefined
        const surface = type === 'tool/result'
          ? { ...call !== undefined ? { sourceEventSeqs: [call.seq] } : {}, surfaceOp: 'append' }
          : {}
        const marked = ignorable === undefined ? {} : { ignorable }
        lines.push(Buffer.from(JSON.stringify({ type, seq, time: 0, data, ...surface, ...marked }), 'utf8'))
      }
      break
    default: throw new Error(`unknown damage ${JSON.stringify(damage.how)}`)
  }
  return { lines, tail }
}

// --- serve ------------------------------------------------------------------------------------------

// A stray asynchronous failure (a listener the original contains only by logging) must not end the adapter.
process.on('unhandledRejection', (reason) => {
  process.stderr.write(`unhandled rejection: ${reason?.stack ?? describeThrown(reason)}\n`)
  strayRejection?.(reason)
})
process.on('uncaughtException', (error) => {
  process.stderr.write(`uncaught exception: ${error?.stack ?? describeThrown(error)}\n`)
})

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (line.trim() === '') continue
  const command = JSON.parse(line)
  if (command.cmd === 'start') {
    reply({ version: PROTOCOL_VERSION, implementation: IMPLEMENTATION })
  } else if (command.cmd === 'run') {
    reply(await answerRun(command.seq, command.scenario))
  } else {
    break
  }
}
process.exit(0)
