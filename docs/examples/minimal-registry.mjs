// minimal-registry.mjs: a tiny tool registry, the implementation under test of docs/writing-an-adapter.md.
//
// Plain ES module for Node.js 20, no dependencies. It implements the core of the canonical tool output contract
// (docs/contract.md): registration, the value-schema DSL, the raw schema subset, validation, the lossless
// snapshot, normalization into the result union, freezing, and the call pipeline with its pre-execute listeners
// and result observers. It knows nothing of the kit: minimal-adapter.mjs translates the kit's scenarios into
// calls of what this module exports.
//
//   import { Registry, defineTool, compileValueSchema, HarnessError, errorMessage } from './minimal-registry.mjs'
//
// The code is written to be read: it recurses where a production registry would walk iteratively (the
// contract's values may nest thousands of levels deep).

// --- 1. Lossless JSON: snapshot, freeze, and the kinds of the schema subset ----------------------------------------

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

// --- 2. Errors -----------------------------------------------------------------------------------------------------

/** The coded error class: its `name` and `code` become a failure's `info` (R-RES-3). */
export class HarnessError extends Error {
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

/** The message of anything thrown, without ever throwing itself. */
export function errorMessage(error) {
  try {
    if (error instanceof Error) return error.message
    if (error !== null && typeof error === 'object' && typeof error.message === 'string') return error.message
    return String(error)
  } catch {
    return '<unprintable thrown value>'
  }
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

// --- 3. The raw schema subset (R-SUBSET): every violation, in the contract's order ---------------------------------

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
    } else {
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

// --- 4. Validation of a (snapshotted) value against a supported schema (R-VAL) -------------------------------------
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
      if (!Object.hasOwn(value, key)) out.push(`missing required property "${propertyPath(path, key)}"`)
    }
    for (const key of Object.keys(properties)) {
      if (Object.hasOwn(value, key)) violations(properties[key], value[key], propertyPath(path, key), out)
    }
    if (schema.additionalProperties === false) {
      for (const key of Object.keys(value).filter(key => !Object.hasOwn(properties, key))) {
        out.push(`"${propertyPath(path, key)}" is not a declared property (additionalProperties: false)`)
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

// --- 5. The value-schema DSL (R-DSL): compile to raw JSON Schema, failing at the first problem ---------------------

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

/** After compiling, the compiled schema must pass the raw subset's check, from the root `schema` (R-DSL-10). */
function checked(compiled) {
  const found = subsetViolations(compiled, 'schema')
  if (found.length > 0) throw jsonSchemaError(found)
  return compiled
}

export const compileValueSchema = (spec, path = 'schema') => checked(compileNode(spec, path))

function compileParameters(spec, path = 'parameters') {
  const { properties, required } = compilePropertyMap(spec, path)
  const schema = required.length > 0 ? { type: 'object', properties, required } : { type: 'object', properties }
  return checked(schema)
}

const positiveFinite = value => typeof value === 'number' && Number.isFinite(value) && value > 0

/** `defineTool`: checks `timeoutMs`, compiles the schemas, and validates the arguments before the body runs. */
export function defineTool({ name, description, parameters, output, execute, timeoutMs }) {
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

// --- 6. The registry: registration and the call pipeline -----------------------------------------------------------

/**
 * A registry of tools and the hooks of its call pipeline, each list composed in the order it is filled. Every
 * hook gets the call's `run`: `{callId, name, agent, arguments}`, `arguments` being the frozen argument snapshot
 * (a body gets it too, with `run.concludeTurn()`).
 */
export class Registry {
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
    run.concluded = false
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
