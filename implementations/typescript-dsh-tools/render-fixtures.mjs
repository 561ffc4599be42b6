// Render every case of fixtures/renderers with the original's own first-party renderer and compare the
// result, byte for byte, with its golden in snapshots/renderers.
//
//   node implementations/typescript-dsh-tools/render-fixtures.mjs [--release VERSION] [--family NAME] [--print]
//
// --release VERSION renders with the packages of releases/VERSION/ (release.mjs), the judged release's otherwise.
//
// A case runs as the original registry runs a direct call's success path: the value is validated against the
// tool's own output schema (a violation is the registry's INVALID_TOOL_OUTPUT message), frozen, rendered and,
// for a case with "finalize": true, passed through the tool's finalizeContent. The golden of the result is the
// UTF-8 text of a lone well-formed text block, otherwise the compact JSON of the content (docs/renderers.md).
//
// Per family it prints the release that judged it (the package whose plugin registers the tool, and its version:
// 0.1.0-rc.8 but for terminal_* and lsp, judged by older releases; first-party.mjs), the cases, how many are
// identical, different and not constructible, and the first difference of each differing case; then the same
// counts by release. It exits 1 when a case differs and renderer-baseline.json does not list
// it with a reason, or when a listed case no longer differs (a stale entry); 2 when it cannot run at all.

import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { requireEngine } from './engine.mjs'
import { ARGUMENTS, RELEASE_ROOT } from './release.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const REPOSITORY = join(HERE, '..', '..')
const FIXTURES = join(REPOSITORY, 'fixtures', 'renderers')
const GOLDENS = join(REPOSITORY, 'snapshots', 'renderers')
const BASELINE = join(HERE, 'renderer-baseline.json')
const CONTEXT_CHARS = 40

function fail(message) {
  console.error(`render-fixtures: ${message}`)
  process.exit(2)
}

requireEngine('render-fixtures')
if (!existsSync(join(RELEASE_ROOT, 'node_modules', '@deepseek-ai', 'dsh-tools'))) {
  fail(`the original's packages are not installed: run \`npm ci\` in ${RELEASE_ROOT}`)
}

const { firstPartyDefinition, firstPartyFinalizer, firstPartyRelease, NOT_CONSTRUCTIBLE } = await import('./first-party.mjs')
const { validateJsonSchemaValue } = await import('@deepseek-ai/dsh-tools')

function parseArguments(argv) {
  const options = { family: undefined, print: false }
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index]
    if (argument === '--print') options.print = true
    else if (argument === '--family' && index + 1 < argv.length) options.family = argv[++index]
    else fail(`unknown argument ${JSON.stringify(argument)} (usage: render-fixtures.mjs [--release VERSION] [--family NAME] [--print])`)
  }
  return options
}

/** Freeze a parsed JSON value in place, as the registry deep-freezes what it hands a renderer (any depth). */
function deepFreeze(root) {
  const pending = [root]
  while (pending.length > 0) {
    const value = pending.pop()
    if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
      Object.freeze(value)
      pending.push(...Object.values(value))
    }
  }
  return root
}

function loadCases(only) {
  const cases = []
  for (const family of readdirSync(FIXTURES).sort()) {
    if (only !== undefined && family !== only) continue
    const directory = join(FIXTURES, family)
    if (!existsSync(directory) || family.includes('.')) continue
    for (const file of readdirSync(directory).filter((name) => name.endsWith('.json')).sort()) {
      const data = JSON.parse(readFileSync(join(directory, file), 'utf8'))
      cases.push({
        family,
        name: file.slice(0, -'.json'.length),
        args: data.args ?? {},
        value: data.value,
        config: data.config ?? {},
        finalize: data.finalize === true,
      })
    }
  }
  return cases
}

/** The golden text of a content list: the lone well-formed text block's text, else its compact JSON. */
function goldenOf(content) {
  if (
    Array.isArray(content) &&
    content.length === 1 &&
    typeof content[0] === 'object' &&
    content[0] !== null &&
    Object.keys(content[0]).length === 2 &&
    content[0].type === 'text' &&
    typeof content[0].text === 'string' &&
    content[0].text.isWellFormed()
  ) {
    return { suffix: '.txt', text: content[0].text }
  }
  return { suffix: '.json', text: JSON.stringify(content) }
}

function readGolden(family, name) {
  for (const suffix of ['.txt', '.json']) {
    const path = join(GOLDENS, family, `${name}${suffix}`)
    if (existsSync(path)) return { suffix, bytes: readFileSync(path) }
  }
  return undefined
}

/** Render one case as the original's success path does; `{text}` of its golden form, or `{error}`. */
async function renderCase(testCase) {
  let definition
  try {
    definition = await firstPartyDefinition(testCase.family, testCase.config)
  } catch (error) {
    return { error: `the original refuses this configuration: ${error.message}` }
  }
  if (definition === undefined) return undefined
  const violations = validateJsonSchemaValue(definition.output.schema, testCase.value, 'value')
  if (violations.length > 0) {
    return { error: `tool "${definition.name}" returned invalid output: ${violations.join('; ')}` }
  }
  const args = deepFreeze(testCase.args)
  const value = deepFreeze(testCase.value)
  let content
  try {
    content = definition.output.render(args, value)
  } catch (error) {
    return { error: `tool "${definition.name}" returned invalid output: output.render failed: ${error.message}` }
  }
  if (testCase.finalize) {
    const finalize = await firstPartyFinalizer(testCase.family, testCase.config)
    content = finalize(args, value, content)
  }
  return goldenOf(content)
}

function excerpt(text, at) {
  const start = Math.max(0, at - CONTEXT_CHARS)
  const shown = text.slice(start, at + CONTEXT_CHARS)
  return `${start > 0 ? '…' : ''}${JSON.stringify(shown)}${at + CONTEXT_CHARS < text.length ? '…' : ''}`
}

function firstDifference(expected, actual) {
  let at = 0
  while (at < expected.length && at < actual.length && expected[at] === actual[at]) at += 1
  return at
}

function describeDifference(golden, rendered) {
  if (golden === undefined) return ['no golden']
  if (rendered.error !== undefined) return [`the original fails: ${rendered.error}`]
  const expected = golden.bytes.toString('utf8')
  const lines = []
  if (golden.suffix !== rendered.suffix) lines.push(`golden is ${golden.suffix}, the original gives ${rendered.suffix}`)
  const at = firstDifference(expected, rendered.text)
  lines.push(`first difference at UTF-16 index ${at} (lengths ${expected.length} vs ${rendered.text.length})`)
  lines.push(`expected ${excerpt(expected, at)}`)
  lines.push(`actual   ${excerpt(rendered.text, at)}`)
  return lines
}

function sameBytes(golden, rendered) {
  if (golden === undefined || rendered.error !== undefined || golden.suffix !== rendered.suffix) return false
  return Buffer.from(rendered.text, 'utf8').equals(golden.bytes)
}

function loadBaseline() {
  const data = JSON.parse(readFileSync(BASELINE, 'utf8'))
  const deviations = data.deviations ?? {}
  for (const [id, reason] of Object.entries(deviations)) {
    if (typeof reason !== 'string' || reason.trim().length === 0) fail(`${BASELINE}: "${id}" needs a reason`)
  }
  return deviations
}

const options = parseArguments(ARGUMENTS)
const baseline = loadBaseline()
const cases = loadCases(options.family)
if (cases.length === 0) fail(`no fixtures${options.family === undefined ? '' : ` for family "${options.family}"`}`)

const families = new Map()
const problems = []
const seen = new Set()
for (const testCase of cases) {
  const id = `${testCase.family}/${testCase.name}`
  seen.add(id)
  const tally = families.get(testCase.family) ?? { cases: 0, identical: 0, different: 0, notConstructible: 0, lines: [] }
  families.set(testCase.family, tally)
  tally.cases += 1
  const rendered = await renderCase(testCase)
  if (rendered === undefined) {
    tally.notConstructible += 1
    if (Object.hasOwn(baseline, id)) problems.push(`${id}: listed in the baseline but not constructible`)
    continue
  }
  if (options.print) {
    tally.lines.push(`  ${id}: ${rendered.error === undefined ? JSON.stringify(rendered.text) : `fails: ${rendered.error}`}`)
  }
  if (sameBytes(readGolden(testCase.family, testCase.name), rendered)) {
    tally.identical += 1
    if (Object.hasOwn(baseline, id)) problems.push(`${id}: stale baseline entry (the original now renders the golden)`)
    continue
  }
  tally.different += 1
  const known = Object.hasOwn(baseline, id)
  tally.lines.push(`  ${id}${known ? ` (known deviation: ${baseline[id]})` : ''}`)
  for (const line of describeDifference(readGolden(testCase.family, testCase.name), rendered)) tally.lines.push(`    ${line}`)
  if (!known) problems.push(`${id}: differs and is not a known deviation`)
}
if (options.family === undefined) {
  for (const id of Object.keys(baseline)) if (!seen.has(id)) problems.push(`${id}: stale baseline entry (no such case)`)
}

const COUNTS = ['cases', 'identical', 'different', 'notConstructible']
const FAMILY_WIDTH = 20
const RELEASE_WIDTH = 32

function row(label, tally, reason = '') {
  return (
    `${label} ${String(tally.cases).padStart(5)}  ${String(tally.identical).padStart(9)}  ` +
    `${String(tally.different).padStart(9)}  ${String(tally.notConstructible).padStart(17)}${reason}`
  )
}

/** Release versions newest first (numeric parts compared as numbers), the unpublished last. */
function newestFirst(a, b) {
  if (a === undefined || b === undefined) return (a === undefined) - (b === undefined)
  const parts = (version) => version.split(/[.-]/).map((part) => (/^\d+$/.test(part) ? Number(part) : part))
  const [left, right] = [parts(a), parts(b)]
  for (let index = 0; index < Math.max(left.length, right.length); index += 1) {
    if (left[index] !== right[index]) return (left[index] ?? '') < (right[index] ?? '') ? 1 : -1
  }
  return 0
}

const totals = { cases: 0, identical: 0, different: 0, notConstructible: 0 }
const releases = new Map()
console.log(
  `${'family'.padEnd(FAMILY_WIDTH)} ${'judged by (@deepseek-ai/…)'.padEnd(RELEASE_WIDTH)} ` +
    'cases  identical  different  not constructible',
)
for (const [family, tally] of families) {
  const release = firstPartyRelease(family)
  const judge = release === undefined ? '(not published)' : `${release.name.replace(/^@deepseek-ai\//, '')} ${release.version}`
  const byRelease = releases.get(release?.version) ?? { packages: new Set(), families: [], cases: 0, identical: 0, different: 0, notConstructible: 0 }
  releases.set(release?.version, byRelease)
  if (release !== undefined) byRelease.packages.add(release.name)
  byRelease.families.push(family)
  for (const key of COUNTS) {
    totals[key] += tally[key]
    byRelease[key] += tally[key]
  }
  const reason = tally.notConstructible > 0 && NOT_CONSTRUCTIBLE[family] !== undefined ? `  (${NOT_CONSTRUCTIBLE[family]})` : ''
  console.log(row(`${family.padEnd(FAMILY_WIDTH)} ${judge.padEnd(RELEASE_WIDTH)}`, tally, reason))
  for (const line of tally.lines) console.log(line)
}
console.log(row('total'.padEnd(FAMILY_WIDTH + 1 + RELEASE_WIDTH), totals))

console.log(`\n${'release'.padEnd(16)} families  cases  identical  different  not constructible  packages`)
for (const [version, tally] of [...releases].sort(([a], [b]) => newestFirst(a, b))) {
  const packages = [...tally.packages].map((name) => name.replace(/^@deepseek-ai\//, '')).sort()
  // An unpublished family has no package to name: its families are named instead.
  const shown = packages.length === 0 ? tally.families.join(', ') : packages.length > 2 ? `${packages.length} packages` : packages.join(', ')
  console.log(`${row(`${(version ?? '(not published)').padEnd(16)} ${String(tally.families.length).padStart(8)}`, tally)}  ${shown}`)
}
if (problems.length > 0) {
  console.log(`\n${problems.length} problem(s):`)
  for (const problem of problems) console.log(`  ${problem}`)
  process.exit(1)
}
console.log(totals.different === 0 ? '\nno case differs' : '\nevery difference is a known deviation')
