// minimal-adapter.mjs: the toolcanon adapter of minimal-registry.mjs (docs/writing-an-adapter.md builds it).
//
// It speaks the kit's adapter protocol (docs/protocol.md, "Adapter protocol") on its standard streams, and runs
// each scenario it is sent against a fresh registry. It only translates: the scenario's fixtures, hooks and
// steps into registry calls, the registry's results into the transcript. What the contract asks for is the
// registry's to do.
//
//   toolcanon check --impl-cmd "node minimal-adapter.mjs"

import { createInterface } from 'node:readline'
import { runInNewContext } from 'node:vm'
import { HarnessError, Registry, compileValueSchema, defineTool, errorMessage } from './minimal-registry.mjs'

const PROTOCOL_VERSION = 1
const IMPLEMENTATION = { name: 'minimal-registry', language: 'javascript', version: '1.0.0', capabilities: [] }

// Standard output carries protocol lines only: anything else this process prints goes to standard error.
const writeLine = process.stdout.write.bind(process.stdout)
process.stdout.write = process.stderr.write.bind(process.stderr)
console.log = console.info = console.debug = console.error

function reply(message) {
  writeLine(`${JSON.stringify(message)}\n`)
}

async function serve() {
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (line.trim() === '') continue
    const command = JSON.parse(line)
    if (command.cmd === 'start') reply({ version: PROTOCOL_VERSION, implementation: IMPLEMENTATION })
    else if (command.cmd === 'run') reply(await answerRun(command.seq, command.scenario))
    else break // stop
  }
}

// Serve once the whole module has loaded: a run needs what the rest of it defines.
setImmediate(serve)

/** The answer to one `run`: skipped, the scenario's transcript, or errored when the adapter itself failed. */
async function answerRun(seq, scenario) {
  const missing = (scenario.requires ?? []).find(name => !IMPLEMENTATION.capabilities.includes(name))
  if (missing !== undefined) return { seq, skipped: true, message: `missing capability: ${missing}` }
  const kind = firstInexpressible(scenario)
  if (kind !== undefined) return { seq, skipped: true, message: `not expressible: ${kind}` }
  try {
    return { seq, transcript: JSON.stringify(await new ScenarioRun(scenario).transcript()) }
  } catch (error) {
    return { seq, errored: true, context: { message: errorMessage(error), stack: String(error?.stack ?? '') } }
  }
}

/** The kinds of exotic value JavaScript has no value for (docs/protocol.md, "Exotic values"). */
const INEXPRESSIBLE = new Set(['unsafe-integer', 'non-string-key', 'bytes', 'tuple', 'set'])

/** The kind of the first exotic tag, in document order, that JavaScript cannot express. */
function firstInexpressible(node) {
  if (node === null || typeof node !== 'object') return undefined
  if (Object.hasOwn(node, '$exotic')) return INEXPRESSIBLE.has(node.$exotic) ? node.$exotic : undefined
  for (const item of Object.values(node)) {
    const kind = firstInexpressible(item)
    if (kind !== undefined) return kind
  }
  return undefined
}

/** The entry of a catalogue table; an error naming what this adapter lacks, for a kind it has no entry for. */
function lookup(table, what, kind) {
  if (!Object.hasOwn(table, kind)) throw new Error(`this adapter has no ${what} ${JSON.stringify(kind)}`)
  return table[kind]
}

/** A fresh copy of a scenario value, each exotic tag built anew (an own `__proto__` key stays a plain key). */
function materialize(value) {
  if (Array.isArray(value)) return value.map(materialize)
  if (value === null || typeof value !== 'object') return value
  if (Object.hasOwn(value, '$exotic')) return lookup(EXOTIC, 'exotic kind', value.$exotic)(value)
  const copy = {}
  for (const [key, item] of Object.entries(value)) {
    const property = { value: materialize(item), enumerable: true, writable: true, configurable: true }
    Object.defineProperty(copy, key, property)
  }
  return copy
}

class OpaqueObject {}
class DictSubclass {}
class ListSubclass extends Array {}
const getter = get => Object.defineProperty({}, 'x', { get, enumerable: true })
const thrower = message => () => { throw new Error(message) }

/** The native value of each exotic kind JavaScript has, from its tag. */
const EXOTIC = {
  'nan': () => Number.NaN,
  'infinity': () => Number.POSITIVE_INFINITY,
  'negative-infinity': () => Number.NEGATIVE_INFINITY,
  'negative-zero': () => -0,
  'cycle': () => { const list = []; list.push(list); return list },
  'opaque-object': () => new OpaqueObject(),
  'function': () => function exotic() {},
  'lone-surrogate': () => '\ud800',
  'undefined': () => undefined,
  'bigint': () => 10n,
  'sparse-array': () => [1, , 3], // eslint-disable-line no-sparse-arrays
  'symbol-key': () => ({ a: 1, [Symbol('key')]: 1 }),
  'throwing-getter': tag => getter(thrower(tag.message ?? 'throwing getter')),
  'dict-subclass': () => Object.assign(new DictSubclass(), { a: 1 }),
  'list-subclass': () => ListSubclass.of(1, 2),
  'symbol': () => Symbol('exotic'),
  'null-prototype': () => Object.assign(Object.create(null), { a: 1 }),
  'other-realm': () => runInNewContext('({ a: [1] })'),
  'accessor-property': () => { let reads = 0; return getter(() => (reads += 1)) },
  'non-enumerable-key': () => Object.defineProperty({ a: 1 }, 'hidden', { value: 1 }),
  'array-extra-key': () => Object.assign([1, 2], { extra: true }),
  'array-symbol-key': () => Object.assign([1, 2], { [Symbol('key')]: true }),
  'date': () => new Date(0),
  'map': () => new Map([['a', 1]]),
  'regexp': () => /a/,
  'error': () => new Error('exotic'),
  'boxed-primitive': () => new Number(1), // eslint-disable-line no-new-wrappers
  'throwing-proxy': tag => new Proxy({}, { ownKeys: thrower(tag.message ?? 'throwing proxy') }),
}

const text = value => ({ type: 'text', text: value })
const asText = value => (typeof value === 'string' ? value : JSON.stringify(value))
const isRecord = value => value !== null && typeof value === 'object' && !Array.isArray(value)
const MISSING = Symbol('missing')

/** A child on a probe's path or of a `field` renderer: an own key of an object, an index of an array. */
function child(node, element) {
  if (Array.isArray(node)) {
    return Number.isInteger(element) && element >= 0 && element < node.length ? node[element] : MISSING
  }
  return isRecord(node) && typeof element === 'string' && Object.hasOwn(node, element) ? node[element] : MISSING
}

/** The `keys` renderer's view: an object's `[key, view]` pairs in the order its keys are handed, an array's
 * items' views, a scalar's `null`. */
const keyTree = node => Array.isArray(node) ? node.map(keyTree)
  : isRecord(node) ? Object.keys(node).map(key => [key, keyTree(node[key])]) : null

/** The renderers of the behaviour catalogue: each spec makes a tool's `render(args, value)`. */
const RENDERERS = {
  text: spec => (args, value) => [text((spec.prefix ?? '') + asText(value))],
  json: spec => (args, value) => [text(JSON.stringify(value, null, spec.indent))],
  keys: () => (args, value) => [text(JSON.stringify({ arguments: keyTree(args), value: keyTree(value) }))],
  field: spec => (args, value) => {
    const key = Array.isArray(value) && /^(?:0|[1-9][0-9]*)$/.test(spec.name) ? Number(spec.name) : spec.name
    const field = child(value, key)
    return [text((spec.prefix ?? '') + (field === MISSING ? '' : asText(field)))]
  },
  blocks: () => (args, value) => value,
  constant: spec => () => materialize(spec.content),
  exotic: spec => () => materialize(spec.content),
  raise: spec => () => { throw new Error(spec.message) },
}

/** The metadata projectors: each spec makes a tool's `presentationMeta(args, value)`. */
const PROJECTORS = {
  value: () => (args, value) => value,
  wrap: spec => (args, value) => ({ [spec.key]: value }),
  constant: spec => () => materialize(spec.value),
  exotic: spec => () => materialize(spec.value),
  null: () => () => null,
  undefined: () => () => undefined,
  raise: spec => () => { throw new Error(spec.message) },
}

/** A `raise` behaviour's error: the registry's coded error class when it names `error {name, code}`. */
const behaviourError = spec => (spec.error !== undefined
  ? new HarnessError(spec.message, spec.error.code, spec.error.name)
  : new Error(spec.message))

/** The bodies: each spec makes a tool's `execute(args, run)`. */
const BODIES = {
  'return': spec => () => materialize(spec.value),
  'return-arg': spec => args => (isRecord(args) && Object.hasOwn(args, spec.arg)
    ? args[spec.arg]
    : materialize(spec.default ?? null)),
  'raise': spec => () => { throw behaviourError(spec) },
  'conclude': (spec) => {
    const then = lookup(BODIES, 'body', spec.then.kind)(spec.then)
    return (args, run) => { run.concludeTurn(); return then(args, run) }
  },
}

/** The `phases` key of each stage a scenario can leave `bare`. */
const BARE_KEYS = { 'pre-execute': 'pre', 'guard': 'guard', 'execute': 'execute', 'post-execute': 'post' }

/** One scenario, run against a fresh registry in the order of docs/protocol.md, "Scenario format". */
class ScenarioRun {
  registry = new Registry()
  phases = new Map() // run → how often it entered each stage
  runOf = new Map() // result → the run it is the result of
  calls = new Map() // step id → its { run, result }, for probes
  seen = new Map() // run → what its `mutate` observers reported

  constructor(scenario) {
    this.scenario = scenario
    const calls = scenario.steps.filter(step => step.call !== undefined)
    this.callIds = new Map(calls.map(step => [step.id, step.call.callId ?? step.id]))
  }

  async transcript() {
    const registrations = this.registerTools()
    this.instrument()
    for (const hook of this.scenario.hooks ?? []) this.installHook(hook)
    const steps = {}
    for (const step of this.scenario.steps) steps[step.id] = await this.runStep(step)
    const transcript = { formatVersion: 1, scenario: this.scenario.id }
    if (Object.keys(registrations).length > 0) transcript.registrations = registrations
    transcript.steps = steps
    return transcript
  }

  /** Registers the fixture tools in key order; reports every failed registration, and every flagged success. */
  registerTools() {
    const registrations = {}
    for (const [key, spec] of Object.entries(this.scenario.tools)) {
      if (spec.register === false) continue
      // built outside the try: a behaviour this adapter cannot build is its own failure, not a registration's
      const behaviours = this.behaviours(spec)
      try {
        this.registry.register(this.definition(spec.name ?? key, spec, behaviours))
      } catch (error) {
        registrations[key] = { registerError: registrationError(error) }
        continue
      }
      if (spec.registerError === true) registrations[key] = { registered: true }
    }
    return registrations
  }

  /** A fixture's renderer, metadata projector and body, built from the behaviour catalogue. */
  behaviours(spec) {
    const { render, presentationMeta: meta } = spec.output ?? {}
    return {
      render: render && lookup(RENDERERS, 'renderer', render.kind)(render),
      projector: meta && lookup(PROJECTORS, 'metadata projector', meta.kind)(meta),
      execute: this.body(lookup(BODIES, 'body', spec.body.kind)(spec.body)),
    }
  }

  /** A fixture tool: `defineTool` for DSL parameters, a raw definition for `rawParameters` (or no `output`). */
  definition(name, spec, { render, projector, execute }) {
    const output = spec.output
    const description = spec.description ?? name
    const timeoutMs = materialize(spec.timeoutMs)
    if (output !== undefined && !Object.hasOwn(spec, 'rawParameters')) {
      const schema = materialize(output.schema ?? { type: 'json' })
      const parameters = materialize(spec.parameters ?? {})
      const declared = { schema, render, presentationMeta: projector }
      const definition = defineTool({ name, description, parameters, output: declared, execute, timeoutMs })
      if (Object.hasOwn(output, 'rawSchema')) definition.output.schema = materialize(output.rawSchema)
      return definition
    }
    let declared
    if (output !== undefined) {
      const schema = Object.hasOwn(output, 'schema')
        ? compileValueSchema(materialize(output.schema)) // a DSL schema on a raw definition
        : materialize(output.rawSchema)
      declared = { schema, render }
      if (projector !== undefined) declared.presentationMeta = projector
    }
    const parameters = materialize(spec.rawParameters ?? spec.parameters ?? {})
    return { name, description, parameters, output: declared, execute, timeoutMs }
  }

  /** A body that counts each time it runs (the transcript's `phases.body`). */
  body(perform) {
    return async (args, run) => {
      this.count(run).body += 1
      return perform(args, run)
    }
  }

  /** One pass-through hook per stage the scenario leaves not `bare`, installed first (outermost), counting how
   * often each call enters it. */
  instrument() {
    const registry = this.registry
    const bare = new Set(this.scenario.bare ?? [])
    if (!bare.has('pre-execute')) registry.preExecute.push((run, next) => { this.count(run).pre += 1; return next() })
    if (!bare.has('guard')) registry.guards.push((run) => { this.count(run).guard += 1; return undefined })
    if (!bare.has('execute')) registry.around.push((run, next) => { this.count(run).execute += 1; return next() })
    if (!bare.has('post-execute')) {
      registry.postExecute.push((run, result, next) => { this.count(run).post += 1; return next() })
    }
    registry.observers.push((run, result) => { this.count(run).observed += 1; this.runOf.set(result, run) })
  }

  /** A call's counts: one per stage, but none for a bare stage, whose key `phases` leaves out. */
  count(run) {
    if (!this.phases.has(run)) {
      const counts = { pre: 0, guard: 0, execute: 0, body: 0, post: 0, observed: 0 }
      for (const stage of this.scenario.bare ?? []) delete counts[BARE_KEYS[stage]]
      this.phases.set(run, counts)
    }
    return this.phases.get(run)
  }

  /** A scenario hook, applying to the calls its `steps` name, or to every call when it names none. */
  installHook(hook) {
    const callIds = hook.steps && new Set(hook.steps.map(id => this.callIds.get(id) ?? id))
    const applies = run => callIds === undefined || callIds.has(run.callId)
    lookup(HOOK_STAGES, 'hook stage', hook.stage)(this, hook.action, applies)
  }

  async runStep(step) {
    if (step.call !== undefined) return this.call(step)
    if (step.probe !== undefined) return { frozen: probe(this.calls.get(step.probe.step), step.probe) }
    throw new Error(`this adapter has no step ${JSON.stringify(Object.keys(step).find(key => key !== 'id'))}`)
  }

  async call(step) {
    const { name, arguments: args, agent } = step.call
    const callId = this.callIds.get(step.id)
    const result = await this.registry.execute({ callId, name, arguments: materialize(args), agent })
    await new Promise(resolve => setImmediate(resolve)) // the observers that settle later report first
    const run = this.runOf.get(result)
    this.calls.set(step.id, { run, result })
    const report = { result: resultReport(result), phases: { ...this.count(run) } }
    if (this.seen.has(run)) report.seen = this.seen.get(run)
    return report
  }
}

/** A failed registration: the contract's name of the error (a coded error's own, TypeError or Error), its
 * code for a coded error, and its message. */
function registrationError(error) {
  if (error instanceof HarnessError) return { name: error.name, code: error.code, message: error.message }
  return { name: error instanceof TypeError ? 'TypeError' : 'Error', message: errorMessage(error) }
}

/** A result in the transcript's key order: isError, value or error, content, meta?, concludesTurn?. */
function resultReport(result) {
  const report = { isError: result.isError }
  if (result.isError) report.error = result.error
  else report.value = result.value
  report.content = result.content
  if (result.meta !== undefined) report.meta = result.meta
  if (result.concludesTurn === true) report.concludesTurn = true
  return report
}

/** A probe: whether the container at `path` in a call's arguments, content or value resists every mutation. */
function probe({ run, result }, { target, path }) {
  const value = result.isError ? MISSING : result.value
  let node = { arguments: run.arguments, content: result.content, value }[target]
  for (const element of path) node = child(node, element)
  return node !== null && typeof node === 'object' ? resistsEveryMutation(node) : null
}

/** What a `mutate` observer reports of a part: `scalar`, or whether every attempt to change it failed. */
function mutability(node) {
  if (node === null || typeof node !== 'object') return 'scalar'
  return resistsEveryMutation(node) ? 'frozen' : 'mutable'
}

/** What a mutation could change on a container: its prototype, extensibility and own properties. */
function fingerprint(container) {
  const properties = Reflect.ownKeys(container).map((key) => {
    const { value, writable, enumerable, configurable } = Object.getOwnPropertyDescriptor(container, key)
    return [String(key), JSON.stringify(value) ?? String(value), writable, enumerable, configurable]
  })
  return JSON.stringify([Object.getPrototypeOf(container) === null, Object.isExtensible(container), properties])
}

/** True when no mutation JavaScript offers changes the container: each one throws, is refused or does nothing. */
function resistsEveryMutation(container) {
  const before = fingerprint(container)
  const key = Array.isArray(container) ? 0 : (Object.keys(container)[0] ?? 'probe')
  const attempts = [
    () => { container[key] = 'probe' },
    () => { container.probe = 'probe' },
    () => { delete container[key] },
    () => Reflect.set(container, 'probe', 'probe'),
    () => Object.defineProperty(container, 'probe', { value: 'probe' }),
    () => Object.setPrototypeOf(container, null),
    () => Object.assign(container, { probe: 'probe' }),
  ]
  if (Array.isArray(container)) {
    attempts.push(() => container.push(1), () => container.pop(), () => container.shift(), () => container.unshift(1),
      () => container.reverse(), () => container.sort(), () => container.fill(1), () => container.splice(0, 1),
      () => { container.length = 0 })
  }
  for (const attempt of attempts) {
    try {
      attempt()
    } catch {
      continue // refused, as a frozen container must
    }
    if (fingerprint(container) !== before) return false
  }
  return true
}

/** How a scenario hook is installed, by stage: only for the calls it `applies` to, the others passed on. */
const HOOK_STAGES = {
  'pre-execute': (scenario, action, applies) => {
    const decide = lookup(PRE_EXECUTE, 'pre-execute action', action.kind)(action)
    scenario.registry.preExecute.push((run, next) => (applies(run) ? decide() : next()))
  },
  'result-observer': (scenario, action, applies) => {
    const observe = observer(scenario, action)
    scenario.registry.observers.push((run, result) => (applies(run) ? observe(run, result) : undefined))
  },
}

/** The pre-execute actions: each spec makes the decision its listener answers, without delegating. */
const PRE_EXECUTE = {
  allow: () => () => ({ kind: 'allow' }),
  deny: action => () => ({ kind: 'deny', reason: materialize(action.reason) }),
  ask: action => () => ({ kind: 'ask', reason: action.reason }),
  raise: action => () => { throw behaviourError(action) },
}

/** A result observer's action: `mutate` reports what it could change, `later` acts as `then` once it settles. */
function observer(scenario, action) {
  switch (action.kind) {
    case 'mutate': return (run, result) => {
      const report = { at: 'result-observer', arguments: mutability(run.arguments) }
      report.value = result.isError ? 'absent' : mutability(result.value)
      report.content = mutability(result.content)
      scenario.seen.set(run, [...scenario.seen.get(run) ?? [], report])
    }
    case 'later': {
      const then = observer(scenario, action.then)
      return (run, result) => Promise.resolve().then(() => then(run, result))
    }
    case 'raise': return () => { throw behaviourError(action) }
    default: throw new Error(`this adapter has no result-observer action ${JSON.stringify(action.kind)}`)
  }
}
