// A minimal implementation of the canonical tool output contract, with its toolcanon adapter, in one file.
//
// Plain ES module for Node.js 20, no dependencies. It speaks the kit's adapter protocol (docs/protocol.md,
// "Adapter protocol") on its standard streams, and runs each scenario against a tiny registry of its own: the
// contract's core, which the scenarios that require no capability exercise (registration, the value-schema DSL,
// the raw schema subset, validation, the lossless snapshot, normalization, pre-execute listeners, result
// observers, freezing). It declares no capability, so the kit skips every other scenario unsent.
//
//   toolcanon check --impl-cmd "node docs/examples/minimal-adapter.mjs"
//
// docs/writing-an-adapter.md walks through it. The code is written to be read: it recurses where a production
// registry would walk iteratively (the contract's values may nest thousands of levels deep).

import { createInterface } from 'node:readline'
import { runInNewContext } from 'node:vm'

const PROTOCOL_VERSION = 1
const FORMAT_VERSION = 1
/** The optional capabilities of the scenario format this implementation supports: none. */
const CAPABILITIES = []
const IMPLEMENTATION = {
  name: 'minimal-registry', language: 'javascript', version: '1.0.0', capabilities: CAPABILITIES,
}

// --- 1. The protocol loop ------------------------------------------------------------------------------------
// Standard output carries protocol lines only: anything else this process prints goes to standard error.

const writeLine = process.stdout.write.bind(process.stdout)
process.stdout.write = process.stderr.write.bind(process.stderr)
console.log = console.info = console.debug = console.error

function reply(message) {
  writeLine(`${JSON.stringify(message)}\n`)
}

async function answerRun(seq, scenario) {
  const missing = (scenario.requires ?? []).find(capability => !CAPABILITIES.includes(capability))
  if (missing !== undefined) return { seq, skipped: true, message: `missing capability: ${missing}` }
  const kind = firstInexpressible(scenario)
  if (kind !== undefined) return { seq, skipped: true, message: `not expressible: ${kind}` }
  try {
    return { seq, transcript: JSON.stringify(await new ScenarioRun(scenario).run()) }
  } catch (error) {
    return { seq, errored: true, context: { message: errorMessage(error), stack: String(error?.stack ?? '') } }
  }
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

// --- 2. Exotic values ------------------------------------------------------------------------------------------
// A scenario writes what JSON cannot carry as a tag, {"$exotic": KIND}; the adapter builds the native value.

/** The kinds JavaScript has no value for (docs/protocol.md, "Exotic values"): such a scenario is skipped. */
const INEXPRESSIBLE = new Set(['unsafe-integer', 'non-string-key', 'bytes', 'tuple', 'set'])

function firstInexpressible(node) {
  if (Array.isArray(node)) {
    for (const item of node) {
      const kind = firstInexpressible(item)
      if (kind !== undefined) return kind
    }
  } else if (isRecord(node)) {
    if (Object.hasOwn(node, '$exotic')) return INEXPRESSIBLE.has(node.$exotic) ? node.$exotic : undefined
    for (const item of Object.values(node)) {
      const kind = firstInexpressible(item)
      if (kind !== undefined) return kind
    }
  }
  return undefined
}

class OpaqueObject {}
class DictSubclass {}
class ListSubclass extends Array {}

function exoticValue(tag) {
  const define = (target, key, descriptor) => Object.defineProperty(target, key, { enumerable: true, ...descriptor })
  switch (tag.$exotic) {
    case 'nan': return Number.NaN
    case 'infinity': return Number.POSITIVE_INFINITY
    case 'negative-infinity': return Number.NEGATIVE_INFINITY
    case 'negative-zero': return -0
    case 'cycle': { const list = []; list.push(list); return list }
    case 'opaque-object': return new OpaqueObject()
    case 'function': return function exotic() {}
    case 'lone-surrogate': return '\ud800'
    case 'undefined': return undefined
    case 'bigint': return 10n
    case 'sparse-array': return [1, , 3] // eslint-disable-line no-sparse-arrays
    case 'symbol-key': return { a: 1, [Symbol('key')]: 1 }
    case 'throwing-getter': {
      const message = tag.message ?? 'throwing getter'
      return define({}, 'x', { get() { throw new Error(message) } })
    }
    case 'dict-subclass': return Object.assign(new DictSubclass(), { a: 1 })
    case 'list-subclass': return ListSubclass.of(1, 2)
    case 'symbol': return Symbol('exotic')
    case 'null-prototype': return Object.assign(Object.create(null), { a: 1 })
    case 'other-realm': return runInNewContext('({ a: [1] })')
    case 'accessor-property': { let reads = 0; return define({}, 'x', { get: () => (reads += 1) }) }
    case 'non-enumerable-key': return Object.defineProperty({ a: 1 }, 'hidden', { value: 1 })
    case 'array-extra-key': return Object.assign([1, 2], { extra: true })
    case 'array-symbol-key': return Object.assign([1, 2], { [Symbol('key')]: true })
    case 'date': return new Date(0)
    case 'map': return new Map([['a', 1]])
    case 'regexp': return /a/
    case 'error': return new Error('exotic')
    case 'boxed-primitive': return new Number(1) // eslint-disable-line no-new-wrappers
    case 'throwing-proxy': {
      const message = tag.message ?? 'throwing proxy'
      return new Proxy({}, { ownKeys() { throw new Error(message) } })
    }
    default: throw new Error(`unknown exotic kind ${tag.$exotic}`)
  }
}

/** A fresh copy of a scenario value with every exotic tag built (an own `__proto__` key stays data). */
function materialize(value) {
  if (Array.isArray(value)) return value.map(materialize)
  if (!isRecord(value)) return value
  if (Object.hasOwn(value, '$exotic')) return exoticValue(value)
  const copy = {}
  for (const [key, item] of Object.entries(value)) define(copy, key, materialize(item))
  return copy
}

// --- 3. Lossless JSON: snapshot, freeze, and the kinds of the schema subset -------------------------------------

const NOT_LOSSLESS = Symbol('not lossless JSON')

function define(target, key, value) {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

function isRecord(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** An intrinsic `Object.prototype`, of this realm or another one. */
function isObjectPrototype(prototype) {
  return prototype !== null && Object.getPrototypeOf(prototype) === null
    && Object.getOwnPropertyDescriptor(prototype, 'constructor')?.value?.name === 'Object'
}

/** An intrinsic `Array.prototype`, of any realm. */
function isArrayPrototype(prototype) {
  return Array.isArray(prototype) && isObjectPrototype(Object.getPrototypeOf(prototype))
}

/**
 * The lossless snapshot (R-SNAP): a detached copy made of fresh ordinary objects and arrays, or NOT_LOSSLESS.
 * Each own property is read exactly once; a getter or proxy trap that throws makes the snapshot throw.
 */
function snapshot(value, ancestors = new Set()) {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0) ? value : NOT_LOSSLESS
  if (typeof value !== 'object' || ancestors.has(value)) return NOT_LOSSLESS // undefined, functions, symbols, 10n
  const keys = Reflect.ownKeys(value)
  const prototype = Object.getPrototypeOf(value)
  ancestors.add(value)
  try {
    if (Array.isArray(value)) {
      if (!isArrayPrototype(prototype) || keys.length !== value.length + 1) return NOT_LOSSLESS
      const copy = []
      for (let index = 0; index < value.length; index += 1) {
        if (!Object.hasOwn(value, index)) return NOT_LOSSLESS // a hole
        const item = snapshot(value[index], ancestors)
        if (item === NOT_LOSSLESS) return NOT_LOSSLESS
        copy.push(item)
      }
      return copy
    }
    if (prototype !== null && !isObjectPrototype(prototype)) return NOT_LOSSLESS // Date, Map, class instances…
    const copy = {}
    for (const key of keys) {
      if (typeof key === 'symbol' || !Object.getOwnPropertyDescriptor(value, key).enumerable) return NOT_LOSSLESS
      const item = snapshot(value[key], ancestors)
      if (item === NOT_LOSSLESS) return NOT_LOSSLESS
      define(copy, key, item)
    }
    return copy
  } finally {
    ancestors.delete(value)
  }
}

function isLossless(value) {
  try {
    return snapshot(value) !== NOT_LOSSLESS
  } catch {
    return false
  }
}

function deepFreeze(value) {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const item of Object.values(value)) deepFreeze(item)
  }
  return value
}

/** A schema record: a plain object (any realm, or a null prototype) with own enumerable string keys only. */
function isSchemaRecord(value) {
  if (!isRecord(value)) return false
  const prototype = Object.getPrototypeOf(value)
  if (prototype !== null && !isObjectPrototype(prototype)) return false
  return Reflect.ownKeys(value).every(key => typeof key === 'string'
    && Object.getOwnPropertyDescriptor(value, key).enumerable)
}

function isPlainArray(value) {
  return Array.isArray(value) && isArrayPrototype(Object.getPrototypeOf(value))
    && Reflect.ownKeys(value).length === value.length + 1
}

function isJsonNumber(value) {
  return typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0)
}

function matchesScalarType(type, value) {
  switch (type) {
    case 'string': return typeof value === 'string'
    case 'number': return isJsonNumber(value)
    case 'integer': return isJsonNumber(value) && Number.isInteger(value)
    case 'boolean': return typeof value === 'boolean'
    default: return value === null
  }
}

// --- 4. Errors -------------------------------------------------------------------------------------------------

/** The coded error class: its `name` and `code` become a failure's `info` (R-RES-3). */
class HarnessError extends Error {
  constructor(message, code, name = 'HarnessError') {
    super(message)
    this.code = code
    this.name = name
  }
}

const jsonSchemaError = violations =>
  new HarnessError(`unsupported JSON schema: ${violations.join('; ')}`, 'UNSUPPORTED_SCHEMA', 'JsonSchemaError')
const toolOutputError = (tool, violations) => new HarnessError(
  `tool "${tool}" returned invalid output: ${violations.join('; ')}`, 'INVALID_TOOL_OUTPUT', 'ToolOutputError')
const toolArgsError = violations =>
  new HarnessError(`invalid arguments: ${violations.join('; ')}`, 'INVALID_ARGS', 'ToolArgsError')
const toolNotFoundError = tool => new HarnessError(`unknown tool "${tool}"`, 'UNKNOWN_TOOL', 'ToolNotFoundError')

function errorMessage(error) {
  try {
    if (error instanceof Error) return error.message
    if (error !== null && typeof error === 'object' && typeof error.message === 'string') return error.message
    return String(error)
  } catch {
    return '<unprintable thrown value>'
  }
}

/** The contract's name of an error (a registration error's `name`): a coded error's own, TypeError, or Error. */
function contractErrorName(error) {
  if (error instanceof HarnessError) return error.name
  return error instanceof TypeError ? 'TypeError' : 'Error'
}

/** A failure built from an error: `{isError, error {message, info?}, content}` (R-NORM-8). */
function failureFrom(error) {
  const message = errorMessage(error)
  const failure = { isError: true, error: { message }, content: [{ type: 'text', text: `Error: ${message}` }] }
  if (error instanceof HarnessError) failure.error.info = { name: error.name, code: error.code }
  return failure
}

/** A denial's failure: the reason is the message as it is, its String() the content (R-PRE-3, R-PRE-8). */
function denialFrom(reason) {
  const message = typeof reason === 'string' ? reason : snapshot(reason)
  if (message === NOT_LOSSLESS) throw new TypeError('tool result must be losslessly JSON-serializable')
  return { isError: true, error: { message }, content: [{ type: 'text', text: `Error: ${String(message)}` }] }
}

// --- 5. The raw schema subset (R-SUBSET): every violation, in the contract's order -------------------------------

const CONSTRAINTS = ['type', 'oneOf', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const']
const ANNOTATIONS = ['description', 'title', 'default', 'examples']
const SHAPE_KEYWORDS = ['properties', 'required', 'additionalProperties', 'items', 'enum', 'const']
const PLACEMENT = {
  object: ['properties', 'required', 'additionalProperties'],
  array: ['items'],
  string: ['enum', 'const'],
  number: ['enum', 'const'],
  integer: ['enum', 'const'],
  boolean: ['enum', 'const'],
  null: ['enum', 'const'],
}
const UNSUPPORTED = 'is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items'
  + '/enum/const + annotations)'

function subsetViolations(node, path = 'schema', out = [], ancestors = new Set()) {
  if (!isSchemaRecord(node)) {
    out.push(`${path} must be a schema object`)
    return out
  }
  if (ancestors.has(node)) {
    out.push(`${path} is circular`)
    return out
  }
  ancestors.add(node)
  for (const key of Object.keys(node)) {
    if (ANNOTATIONS.includes(key)) {
      if (!isLossless(node[key])) out.push(`${path}.${key} annotation must be lossless JSON data`)
    } else if (!CONSTRAINTS.includes(key)) {
      out.push(`${path}.${key} ${UNSUPPORTED}`)
    }
  }
  for (const key of ['description', 'title']) {
    if (Object.hasOwn(node, key) && typeof node[key] !== 'string') out.push(`${path}.${key} must be a string`)
  }
  const has = key => Object.hasOwn(node, key)
  if (has('type') && has('oneOf')) {
    out.push(`${path} cannot declare both type and oneOf`)
  } else if (has('oneOf')) {
    const branches = node.oneOf
    if (!isPlainArray(branches) || branches.length < 2) {
      out.push(`${path}.oneOf must be an array of at least two schemas`)
    }
    if (isPlainArray(branches)) {
      branches.forEach((branch, i) => subsetViolations(branch, `${path}.oneOf[${i}]`, out, ancestors))
    }
    for (const key of SHAPE_KEYWORDS.filter(has)) out.push(`${path}.${key} is not supported beside oneOf`)
  } else if (has('type')) {
    checkTyped(node, path, out, ancestors)
  } else {
    for (const key of SHAPE_KEYWORDS.filter(has)) out.push(`${path}.${key} requires type or oneOf`)
  }
  ancestors.delete(node)
  return out
}

function checkTyped(node, path, out, ancestors) {
  const type = node.type
  if (Array.isArray(type)) {
    out.push(`${path}.type must be a single type string (type arrays are not supported)`)
    return
  }
  if (typeof type !== 'string' || !Object.hasOwn(PLACEMENT, type)) {
    out.push(`${path}.type must be one of object/array/string/number/integer/boolean/null`)
    return
  }
  for (const key of SHAPE_KEYWORDS) {
    if (Object.hasOwn(node, key) && !PLACEMENT[type].includes(key)) {
      out.push(`${path}.${key} is not supported on type "${type}"`)
    }
  }
  if (type === 'object') {
    let properties = {}
    if (Object.hasOwn(node, 'properties')) {
      if (isSchemaRecord(node.properties)) {
        properties = node.properties
        for (const key of Object.keys(properties)) {
          subsetViolations(properties[key], `${path}.properties.${key}`, out, ancestors)
        }
      } else {
        out.push(`${path}.properties must be an object of schemas`)
      }
    }
    if (Object.hasOwn(node, 'required')) {
      const required = node.required
      if (!isPlainArray(required) || required.some(name => typeof name !== 'string')) {
        out.push(`${path}.required must be an array of strings`)
      } else {
        for (const name of required.filter(name => !Object.hasOwn(properties, name))) {
          out.push(`${path}.required names "${name}" which is not in properties`)
        }
      }
    }
    if (Object.hasOwn(node, 'additionalProperties') && typeof node.additionalProperties !== 'boolean') {
      out.push(`${path}.additionalProperties must be a boolean`)
    }
  } else if (type === 'array') {
    if (Object.hasOwn(node, 'items')) subsetViolations(node.items, `${path}.items`, out, ancestors)
  } else {
    let enumOk = false
    let constOk = false
    if (Object.hasOwn(node, 'enum')) {
      enumOk = isPlainArray(node.enum) && node.enum.length > 0
        && node.enum.every(entry => matchesScalarType(type, entry))
      if (!enumOk) out.push(`${path}.enum must be a non-empty array of ${type} values`)
    }
    if (Object.hasOwn(node, 'const')) {
      constOk = matchesScalarType(type, node.const)
      if (!constOk) out.push(`${path}.const must be a ${type} value`)
    }
    if (enumOk && constOk && !node.enum.includes(node.const)) {
      out.push(`${path}.const must be one of ${path}.enum when both are declared`)
    }
  }
}

// --- 6. Validation of a (snapshotted) value against a supported schema (R-VAL) -----------------------------------
// Values are validated after their snapshot, so the subset's lossless checks of a value cannot fail here.

const label = path => `"${path === '' ? 'arguments' : path}"`
const propertyPath = (path, key) => (path === '' ? key : `${path}.${key}`)
const push = (out, violation) => { out.push(violation); return out }
const EXPECTED = { string: 'a string', number: 'a number', integer: 'an integer', boolean: 'a boolean', null: 'null' }

function violations(schema, value, path, out = []) {
  if (Object.hasOwn(schema, 'oneOf')) {
    const matched = schema.oneOf.filter(branch => violations(branch, value, path).length === 0).length
    if (matched !== 1) out.push(`${label(path)} must match exactly one oneOf branch (matched ${matched})`)
    return out
  }
  if (!Object.hasOwn(schema, 'type')) return out // any JSON
  const type = schema.type
  if (type === 'object') {
    if (!isRecord(value)) return push(out, `${label(path)} must be an object`)
    const properties = schema.properties ?? {}
    for (const key of schema.required ?? []) {
      if (!Object.hasOwn(value, key)) out.push(`missing required property ${label(propertyPath(path, key))}`)
    }
    for (const key of Object.keys(properties)) {
      if (Object.hasOwn(value, key)) violations(properties[key], value[key], propertyPath(path, key), out)
    }
    if (schema.additionalProperties === false) {
      for (const key of Object.keys(value).filter(key => !Object.hasOwn(properties, key))) {
        out.push(`${label(propertyPath(path, key))} is not a declared property (additionalProperties: false)`)
      }
    }
    return out
  }
  if (type === 'array') {
    if (!Array.isArray(value)) return push(out, `${label(path)} must be an array`)
    if (schema.items !== undefined) value.forEach((item, i) => violations(schema.items, item, `${path}[${i}]`, out))
    return out
  }
  if (!matchesScalarType(type, value)) {
    return push(out, `${label(path)} must be ${EXPECTED[type]}`)
  }
  if (Object.hasOwn(schema, 'enum') && !schema.enum.includes(value)) {
    out.push(`${label(path)} must be one of ${JSON.stringify(schema.enum)}`)
  } else if (Object.hasOwn(schema, 'const') && schema.const !== value) {
    out.push(`${label(path)} must be ${JSON.stringify(schema.const)}`)
  }
  return out
}

// --- 7. The value-schema DSL (R-DSL): compile to raw JSON Schema, failing at the first problem --------------------

const DSL_KEYS = { oneOf: ['oneOf', 'type'], json: ['type'], object: ['type', 'properties', 'additionalProperties'],
  array: ['type', 'items'], scalar: ['type', 'enum', 'const'] }
const SCALARS = ['string', 'number', 'integer', 'boolean', 'null']

const dslError = violation => jsonSchemaError([violation])

function annotations(spec) {
  const found = {}
  for (const key of ANNOTATIONS.filter(key => Object.hasOwn(spec, key))) define(found, key, spec[key])
  return found
}

function checkVocabulary(spec, path, allowed, inProperty) {
  for (const key of Object.keys(spec)) {
    if (allowed.includes(key) || ANNOTATIONS.includes(key) || (inProperty && key === 'required')) continue
    throw dslError(`${path}.${key} is not supported by the value schema DSL`)
  }
}

function compilePropertyMap(spec, path) {
  if (!isSchemaRecord(spec)) throw dslError(`${path} must be an object of value schemas`)
  const properties = {}
  const required = []
  for (const key of Object.keys(spec)) {
    const node = spec[key]
    const childPath = `${path}.${key}`
    if (!isSchemaRecord(node)) throw dslError(`${childPath} must be a value schema object`)
    if (Object.hasOwn(node, 'required') && node.required !== true) {
      throw dslError(`${childPath}.required must be true when present`)
    }
    define(properties, key, compileNode(node, childPath, true))
    if (Object.hasOwn(node, 'required')) required.push(key)
  }
  return { properties, required }
}

function compileNode(spec, path, inProperty = false) {
  if (!isSchemaRecord(spec)) throw dslError(`${path} must be a value schema object`)
  if (Object.hasOwn(spec, 'oneOf')) {
    checkVocabulary(spec, path, DSL_KEYS.oneOf, inProperty)
    if (Object.hasOwn(spec, 'type')) throw dslError(`${path} cannot declare both type and oneOf`)
    if (!isPlainArray(spec.oneOf)) throw dslError(`${path}.oneOf must be an array of at least two value schemas`)
    return { oneOf: spec.oneOf.map((branch, i) => compileNode(branch, `${path}.oneOf[${i}]`)), ...annotations(spec) }
  }
  const type = typeof spec.type === 'string' ? spec.type : undefined
  if (type === 'json') {
    checkVocabulary(spec, path, DSL_KEYS.json, inProperty)
    return annotations(spec)
  }
  if (type === 'object') {
    checkVocabulary(spec, path, DSL_KEYS.object, inProperty)
    if (typeof spec.additionalProperties !== 'boolean') {
      throw dslError(`${path}.additionalProperties must be explicitly true or false`)
    }
    const compiled = { type, ...annotations(spec), additionalProperties: spec.additionalProperties }
    if (Object.hasOwn(spec, 'properties')) {
      const { properties, required } = compilePropertyMap(spec.properties, `${path}.properties`)
      compiled.properties = properties
      if (required.length > 0) compiled.required = required
    }
    return compiled
  }
  if (type === 'array') {
    checkVocabulary(spec, path, DSL_KEYS.array, inProperty)
    const compiled = { type, ...annotations(spec) }
    if (Object.hasOwn(spec, 'items')) compiled.items = compileNode(spec.items, `${path}.items`)
    return compiled
  }
  if (SCALARS.includes(type)) {
    checkVocabulary(spec, path, DSL_KEYS.scalar, inProperty)
    const compiled = { type, ...annotations(spec) }
    if (Object.hasOwn(spec, 'enum')) {
      if (!isPlainArray(spec.enum)) throw dslError(`${path}.enum must be a non-empty array of scalar values`)
      compiled.enum = [...spec.enum]
    }
    if (Object.hasOwn(spec, 'const')) compiled.const = spec.const
    return compiled
  }
  throw dslError(`${path}.type must be string/number/integer/boolean/null/array/object/json, or use oneOf`)
}

/** After compiling, the compiled schema must pass the raw subset's check (R-DSL-10). */
function checked(compiled, path) {
  const found = subsetViolations(compiled, path)
  if (found.length > 0) throw jsonSchemaError(found)
  return compiled
}

const compileValueSchema = (spec, path = 'schema') => checked(compileNode(spec, path), path)

function compileParameters(spec, path = 'parameters') {
  const { properties, required } = compilePropertyMap(spec, path)
  return checked(required.length > 0 ? { type: 'object', properties, required } : { type: 'object', properties }, path)
}

const positiveFinite = value => typeof value === 'number' && Number.isFinite(value) && value > 0

/** `defineTool`: checks `timeoutMs`, compiles the schemas, and validates the arguments before the body runs. */
function defineTool({ name, description, parameters, output, execute, timeoutMs }) {
  if (timeoutMs !== undefined && !positiveFinite(timeoutMs)) {
    throw new Error(`defineTool(${name}): timeoutMs must be a positive finite number`)
  }
  const compiledParameters = compileParameters(parameters)
  const schema = compileValueSchema(output.schema)
  const wrapped = { schema, render: (args, value) => output.render(args, value) }
  if (output.presentationMeta !== undefined) {
    wrapped.presentationMeta = (args, value) => output.presentationMeta(args, value)
  }
  return {
    name,
    description,
    parameters: compiledParameters,
    output: wrapped,
    timeoutMs,
    async execute(args, run) {
      const found = violations(compiledParameters, args, '')
      if (found.length > 0) throw toolArgsError(found)
      return execute(args, run)
    },
  }
}

// --- 8. The registry: registration and the call pipeline ---------------------------------------------------------

class Registry {
  tools = new Map()
  preExecute = [] // (run, next) => decision, outermost first
  guards = [] // (run) => reason | undefined
  around = [] // (run, next) => result, outermost first
  postExecute = [] // (run, result, next) => decision, outermost first
  observers = [] // (run, result) => void

  /** Registration's checks, in their order (R-REG-5); returns the disposer. */
  register(definition) {
    const { name, output } = definition
    if (output === null || typeof output !== 'object' || typeof output.render !== 'function'
      || (output.presentationMeta !== undefined && typeof output.presentationMeta !== 'function')) {
      throw new TypeError(`tool "${name}" must declare output { schema, render, presentationMeta? }`)
    }
    const found = subsetViolations(output.schema)
    if (found.length > 0) throw jsonSchemaError(found)
    if (definition.timeoutMs !== undefined && !positiveFinite(definition.timeoutMs)) {
      throw new TypeError(`tool "${name}" timeoutMs must be a positive finite number`)
    }
    if (name === 'run_code') {
      throw new Error('tool name "run_code" is reserved for the Code Mode presentation transport and cannot be '
        + 'registered or shadowed')
    }
    if (this.tools.has(name)) {
      throw new Error(`tool "${name}" is already registered (for a per-agent variant, register through that `
        + 'agent\'s `agent.ctx` instead)')
    }
    this.tools.set(name, definition)
    return () => { if (this.tools.get(name) === definition) this.tools.delete(name) }
  }

  /** One call: `{callId, name, arguments, agent?}` → its final, frozen result. */
  async execute(call) {
    const run = { callId: call.callId, name: call.name, agent: call.agent, arguments: undefined }
    run.deferred = []
    run.concluded = false
    run.deferContext = (message) => { run.deferred.push(message) }
    run.concludeTurn = () => { run.concluded = true }
    let copy
    try {
      copy = snapshot(call.arguments)
    } catch (error) {
      return this.finish(run, failureFrom(error)) // a throwing getter: its own error (R-SNAP-7)
    }
    if (copy === NOT_LOSSLESS) {
      const error = new TypeError('tool execution arguments must be losslessly JSON-serializable')
      return this.finish(run, failureFrom(error))
    }
    run.arguments = deepFreeze(copy)
    let result
    try {
      let decision = await waterfall(this.preExecute, run, [], () => ({ kind: 'allow' }))
      if (decision.kind === 'ask') { // no approval service: the contract's deny (R-PRE-4)
        const denial = decision.reason ?? `tool "${run.name}" requires approval (not yet supported)`
        decision = { kind: 'deny', reason: denial }
      }
      let reason = decision.kind === 'deny' ? decision.reason : undefined
      for (const guard of decision.kind === 'allow' ? this.guards : []) {
        reason = guard(run)
        if (reason !== undefined) break
      }
      if (reason !== undefined) {
        result = deepFreeze(denialFrom(reason)) // a denial: message the reason, no info; it reaches post-execute
      } else {
        result = await waterfall(this.around, run, [], () => this.bodyStage(run))
        if (run.deferred.length > 0) {
          result = { ...result, additionalContexts: [...run.deferred, ...(result.additionalContexts ?? [])] }
        }
      }
    } catch (error) {
      return this.finish(run, failureFrom(error)) // a hook that raised: a final failure, no post-execute
    }
    try {
      const decision = await waterfall(this.postExecute, run, [result], () => ({ kind: 'accept' }))
      if (decision.kind !== 'accept' || Object.hasOwn(decision, 'content') || Object.hasOwn(decision, 'value')) {
        throw new Error('this registry supports no post-execute decision but a plain accept')
      }
    } catch (error) {
      result = failureFrom(error)
    }
    return this.finish(run, result)
  }

  /** The body stage: resolve the tool, run its body, normalize its value; any error is a failure. */
  async bodyStage(run) {
    try {
      const tool = this.tools.get(run.name)
      if (tool === undefined) throw toolNotFoundError(run.name)
      return this.success(run, tool, await tool.execute(run.arguments, run))
    } catch (error) {
      return failureFrom(error)
    }
  }

  /** Normalize a candidate value (R-NORM-1): snapshot, validate, freeze, render, snapshot content, metadata. */
  success(run, tool, candidate) {
    const project = (projector, args, value) => {
      let projected
      try {
        projected = snapshot(tool.output[projector](args, value))
      } catch (error) {
        throw toolOutputError(tool.name, [`output.${projector} failed: ${errorMessage(error)}`])
      }
      if (projected === NOT_LOSSLESS) {
        throw toolOutputError(tool.name, [`output.${projector} returned non-lossless JSON`])
      }
      return projected
    }
    let value
    try {
      value = snapshot(candidate)
    } catch (error) {
      throw toolOutputError(tool.name, [`value snapshot failed: ${errorMessage(error)}`])
    }
    if (value === NOT_LOSSLESS) throw toolOutputError(tool.name, ['value is not lossless JSON'])
    const found = violations(tool.output.schema, value, 'value')
    if (found.length > 0) throw toolOutputError(tool.name, found)
    deepFreeze(value)
    const result = { isError: false, value, content: project('render', run.arguments, value) }
    if (tool.output.presentationMeta !== undefined) result.meta = project('presentationMeta', run.arguments, value)
    if (run.concluded) result.concludesTurn = true
    return result
  }

  /** Every path ends here: freeze the result, notify the observers (each one's failure contained, R-OBS-2). */
  finish(run, result) {
    deepFreeze(result)
    Object.freeze(run)
    for (const observe of this.observers) {
      try {
        // an observer may settle later: it is not waited for, and its failure then is contained too
        Promise.resolve(observe(run, result)).catch(() => {})
      } catch {
        // contained: the result and the other observers are unaffected
      }
    }
    return result
  }
}

/** Listeners composed outermost first: each gets `next()`, which runs the ones inside it, then `innermost`. */
function waterfall(listeners, run, extra, innermost) {
  const step = index => (index === listeners.length
    ? innermost()
    : listeners[index](run, ...extra, () => step(index + 1)))
  return Promise.resolve(step(0))
}

// --- 9. One scenario: fixtures from the behaviour catalogue, hooks, steps, the transcript -----------------------

const text = value => ({ type: 'text', text: value })
const asText = value => (typeof value === 'string' ? value : JSON.stringify(value))
const contextMessage = context => ({ role: 'user', content: [text(context.text)], id: context.id })
const MISSING = Symbol('missing')

/** A child on a probe path or of a `field` renderer: an own key of an object, an index of an array. */
function child(node, element) {
  if (Array.isArray(node)) {
    return Number.isInteger(element) && element >= 0 && element < node.length ? node[element] : MISSING
  }
  return isRecord(node) && typeof element === 'string' && Object.hasOwn(node, element) ? node[element] : MISSING
}

/** A `raise` behaviour's error: the coded error class with `error {name, code}`, else an ordinary one. */
const behaviourError = spec => (spec.error !== undefined
  ? new HarnessError(spec.message, spec.error.code, spec.error.name)
  : new Error(spec.message))

function unsupported(what, kind) {
  return new Error(`this minimal registry does not support the ${what} ${JSON.stringify(kind)}`)
}

class ScenarioRun {
  constructor(scenario) {
    this.scenario = scenario
    this.registry = new Registry()
    this.callIds = new Map(scenario.steps.filter(step => step.call).map(step => [step.id, step.call.callId ?? step.id]))
    this.phases = new Map() // run → its counts
    this.observed = [] // [run, result], in notification order
    this.calls = new Map() // step id → {run, result}
    this.seen = new Map() // run → what its `mutate` observers found
  }

  async run() {
    const registrations = this.registerTools()
    this.installInstrumentation()
    this.installHooks()
    const steps = {}
    for (const step of this.scenario.steps) steps[step.id] = await this.runStep(step)
    const transcript = { formatVersion: FORMAT_VERSION, scenario: this.scenario.id }
    if (Object.keys(registrations).length > 0) transcript.registrations = registrations
    transcript.steps = steps
    return transcript
  }

  registerTools() {
    const registrations = {}
    for (const [key, spec] of Object.entries(this.scenario.tools)) {
      if (spec.register === false) continue
      // outside the try: what this registry cannot build is the adapter's failure, not a registration error
      const behaviours = this.behaviours(spec)
      try {
        this.registry.register(this.definition(spec.name ?? key, spec, behaviours))
      } catch (error) {
        const report = { name: contractErrorName(error) }
        if (error instanceof HarnessError) report.code = error.code
        report.message = errorMessage(error)
        registrations[key] = { registerError: report }
        continue
      }
      if (spec.registerError === true) registrations[key] = { registered: true }
    }
    return registrations
  }

  /** A fixture's renderer, projector and body, built from the behaviour catalogue. */
  behaviours(spec) {
    if (spec.mcp !== undefined) throw unsupported('fixture', 'mcp')
    if (spec.finalizeContent !== undefined) throw unsupported('fixture', 'finalizeContent')
    const output = spec.output
    return {
      render: output?.render !== undefined ? this.renderer(output.render) : undefined,
      projector: output?.presentationMeta !== undefined ? this.projector(output.presentationMeta) : undefined,
      execute: this.body(spec.body),
    }
  }

  /** A fixture tool: `defineTool` for DSL parameters, a raw definition for `rawParameters` (or no `output`). */
  definition(name, spec, { render, projector, execute }) {
    const output = spec.output
    const description = spec.description ?? name
    const timeoutMs = Object.hasOwn(spec, 'timeoutMs') ? materialize(spec.timeoutMs) : undefined
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

  renderer(spec) {
    switch (spec.kind) {
      case 'text': return (args, value) => [text((spec.prefix ?? '') + asText(value))]
      case 'json': return (args, value) => [text(JSON.stringify(value, null, spec.indent))]
      case 'field': return (args, value) => {
        const key = Array.isArray(value) && /^(?:0|[1-9][0-9]*)$/.test(spec.name) ? Number(spec.name) : spec.name
        const field = child(value, key)
        return [text((spec.prefix ?? '') + (field === MISSING ? '' : asText(field)))]
      }
      case 'blocks': return (args, value) => value
      case 'constant': case 'exotic': return () => materialize(spec.content)
      case 'raise': return () => { throw new Error(spec.message) }
      default: throw unsupported('renderer', spec.kind)
    }
  }

  projector(spec) {
    switch (spec.kind) {
      case 'value': return (args, value) => value
      case 'wrap': return (args, value) => ({ [spec.key]: value })
      case 'constant': case 'exotic': return () => materialize(spec.value)
      case 'null': return () => null
      case 'raise': return () => { throw new Error(spec.message) }
      case 'undefined': return () => undefined
      default: throw unsupported('projector', spec.kind)
    }
  }

  body(spec) {
    const perform = async (behaviour, args, run) => {
      switch (behaviour.kind) {
        case 'return': return materialize(behaviour.value)
        case 'return-arg':
          if (isRecord(args) && Object.hasOwn(args, behaviour.arg)) return args[behaviour.arg]
          return materialize(behaviour.default ?? null)
        case 'raise': throw behaviourError(behaviour)
        case 'defer':
          for (const context of behaviour.contexts) run.deferContext(contextMessage(context))
          return perform(behaviour.then, args, run)
        case 'conclude':
          run.concludeTurn()
          return perform(behaviour.then, args, run)
        default: throw unsupported('body', behaviour.kind)
      }
    }
    return async (args, run) => {
      this.count(run).body += 1
      return perform(spec, args, run)
    }
  }

  count(run) {
    if (!this.phases.has(run)) this.phases.set(run, { pre: 0, guard: 0, execute: 0, body: 0, post: 0, observed: 0 })
    return this.phases.get(run)
  }

  /** One pass-through hook per stage, installed first (outermost), counting each call's phases. */
  installInstrumentation() {
    const registry = this.registry
    registry.preExecute.push((run, next) => { this.count(run).pre += 1; return next() })
    registry.guards.push((run) => { this.count(run).guard += 1; return undefined })
    registry.around.push((run, next) => { this.count(run).execute += 1; return next() })
    registry.postExecute.push((run, result, next) => { this.count(run).post += 1; return next() })
    registry.observers.push((run, result) => { this.count(run).observed += 1; this.observed.push([run, result]) })
  }

  installHooks() {
    for (const hook of this.scenario.hooks ?? []) {
      const callIds = hook.steps && new Set(hook.steps.map(name => this.callIds.get(name) ?? name))
      const applies = run => callIds === undefined || callIds.has(run.callId)
      const action = hook.action
      if (hook.stage === 'pre-execute') {
        this.registry.preExecute.push((run, next) => (applies(run) ? this.preExecuteDecision(action) : next()))
      } else if (hook.stage === 'result-observer') {
        this.registry.observers.push((run, result) => (applies(run) ? this.observe(action, run, result) : undefined))
      } else {
        throw unsupported('hook stage', hook.stage)
      }
    }
  }

  /** A result observer's action: `mutate` reports what it could change, `later` acts as `then` once it settles. */
  observe(action, run, result) {
    switch (action.kind) {
      case 'mutate': {
        const value = result.isError ? 'absent' : mutability(result.value)
        const report = { at: 'result-observer', arguments: mutability(run.arguments), value, content: mutability(result.content) }
        this.seen.set(run, [...this.seen.get(run) ?? [], report])
        return undefined
      }
      case 'later': return Promise.resolve().then(() => this.observe(action.then, run, result))
      case 'raise': throw behaviourError(action)
      default: throw unsupported('result-observer action', action.kind)
    }
  }

  preExecuteDecision(action) {
    switch (action.kind) {
      case 'allow': return { kind: 'allow' }
      case 'deny': return { kind: 'deny', reason: materialize(action.reason) }
      case 'ask': return { kind: 'ask', reason: action.reason }
      case 'raise': throw behaviourError(action)
      default: throw unsupported('pre-execute action', action.kind)
    }
  }

  async runStep(step) {
    if (step.call !== undefined && step.abort === undefined) return this.call(step)
    if (step.probe !== undefined) return { frozen: this.probe(step.probe) }
    throw unsupported('step', Object.keys(step).find(key => key !== 'id'))
  }

  async call(step) {
    const { name, arguments: args, agent } = step.call
    const callId = this.callIds.get(step.id)
    const result = await this.registry.execute({ callId, name, arguments: materialize(args), agent })
    await new Promise(resolve => setImmediate(resolve)) // the observers that settle later run before the report
    const [run] = this.observed.findLast(([, observed]) => observed === result)
    this.calls.set(step.id, { run, result })
    const report = { result: resultReport(result), phases: { ...this.count(run) } }
    if (this.seen.has(run)) report.seen = this.seen.get(run)
    return report
  }

  probe({ step, target, path }) {
    const { run, result } = this.calls.get(step)
    const value = result.isError ? MISSING : result.value
    const targets = { arguments: run.arguments, content: result.content, value }
    let node = targets[target]
    for (const element of path) node = child(node, element)
    if (node === null || typeof node !== 'object') return null
    return resistsEveryMutation(node)
  }
}

/** A result in the transcript's key order: isError, value | error, content, meta?, additionalContexts?,
 * concludesTurn?. */
function resultReport(result) {
  const report = { isError: result.isError }
  if (result.isError) report.error = result.error
  else report.value = result.value
  report.content = result.content
  if (result.meta !== undefined) report.meta = result.meta
  if (result.additionalContexts !== undefined) {
    const reported = message => ({ id: message.id, text: message.content[0].text })
    report.additionalContexts = result.additionalContexts.map(reported)
  }
  if (result.concludesTurn === true) report.concludesTurn = true
  return report
}

/** What a mutation could change on a container: its prototype, extensibility and own properties. */
function fingerprint(container) {
  const properties = Reflect.ownKeys(container).map((key) => {
    const { value, writable, enumerable, configurable } = Object.getOwnPropertyDescriptor(container, key)
    return [String(key), JSON.stringify(value) ?? String(value), writable, enumerable, configurable]
  })
  return JSON.stringify([Object.getPrototypeOf(container) === null, Object.isExtensible(container), properties])
}

/** What a `mutate` observer reports of a part: `scalar`, or whether every attempt to change the container failed. */
function mutability(node) {
  if (node === null || typeof node !== 'object') return 'scalar'
  return resistsEveryMutation(node) ? 'frozen' : 'mutable'
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

await serve()
