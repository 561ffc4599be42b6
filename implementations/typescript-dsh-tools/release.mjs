// Which release of the original the scripts here run: `--release VERSION` on the command line picks the folder
// `releases/VERSION/` (its own package.json, lock and node_modules); without it, this folder, which pins the
// judged release. Importing this module before any package makes every package the scripts import resolve in that
// folder's node_modules, and only there: a resolution that leaves the folder (a package its lock does not hold,
// found in this folder's tree instead) throws, so that no release is ever judged with another release's packages.
//
//   RELEASE_ROOT   the folder whose packages run: this folder, or releases/VERSION
//   RELEASE        the VERSION given, or undefined for this folder's own
//   ARGUMENTS      the command line without `--release VERSION`

import { existsSync, realpathSync } from 'node:fs'
// A namespace import: a Node too old for registerHooks still loads this module, so that without --release the
// script's engine check runs and refuses that Node in one line (with --release, this module refuses it first).
import * as nodeModule from 'node:module'
import { dirname, join, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

import { PINNED_NODE } from './engine.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))

function fail(message) {
  process.stderr.write(`${message}\n`)
  process.exit(2)
}

function parse(argv) {
  const rest = []
  let release
  for (let index = 0; index < argv.length; index += 1) {
    if (argv[index] !== '--release') {
      rest.push(argv[index])
      continue
    }
    release = argv[index + 1]
    index += 1
    if (release === undefined || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?$/.test(release)) {
      fail(`--release takes a version, such as 0.1.0-rc.7 (got ${JSON.stringify(release ?? '')})`)
    }
  }
  return { release, rest }
}

const parsed = parse(process.argv.slice(2))

export const RELEASE = parsed.release
export const ARGUMENTS = Object.freeze(parsed.rest)
export const RELEASE_ROOT = RELEASE === undefined ? HERE : join(HERE, 'releases', RELEASE)

if (RELEASE !== undefined) {
  if (!existsSync(join(RELEASE_ROOT, 'package.json'))) {
    fail(`--release ${RELEASE}: no such release folder, ${RELEASE_ROOT} (tools/releases.py lists the releases)`)
  }
  if (!existsSync(join(RELEASE_ROOT, 'node_modules', '@deepseek-ai', 'dsh-tools'))) {
    fail(`--release ${RELEASE}: its packages are not installed: run \`npm ci\` in ${RELEASE_ROOT}`)
  }
  const modules = realpathSync(join(RELEASE_ROOT, 'node_modules')) + sep
  const ownModules = join(HERE, 'node_modules') + sep
  const anchor = pathToFileURL(join(RELEASE_ROOT, 'package.json')).href
  const bare = (specifier) => !/^(\.|\/|[a-z][a-z0-9+.-]*:)/i.test(specifier)
  const mine = (url) => url?.startsWith('file:') && !fileURLToPath(url).startsWith(ownModules)
    && fileURLToPath(url).startsWith(HERE + sep) && !fileURLToPath(url).startsWith(modules)
  if (typeof nodeModule.registerHooks !== 'function') {
    fail(`--release ${RELEASE}: Node ${process.version} cannot keep the release's packages apart (no `
      + `module.registerHooks): run it with the pinned Node, ${PINNED_NODE}`)
  }
  nodeModule.registerHooks({
    resolve(specifier, context, nextResolve) {
      // This folder's scripts import the packages from the release's folder; the packages import from their own.
      const redirected = bare(specifier) && mine(context.parentURL) ? { ...context, parentURL: anchor } : context
      const resolved = nextResolve(specifier, redirected)
      if (bare(specifier) && resolved.url.startsWith('file:')) {
        const path = realpathSync(fileURLToPath(resolved.url))
        if (!path.startsWith(modules)) {
          throw new Error(`--release ${RELEASE}: ${specifier} resolved outside ${modules}, to ${path}`)
        }
      }
      return resolved
    },
  })
}
