// The original first-party tools' own Native renderers, by family.
//
// Each family's tool is registered the way a deployment registers it: a cordis Context with the real
// system-prompt and tool-registry services, inert stand-ins for the services the tool only touches when it
// executes (fs, shell, web, jobs, ...), and the tool's own plugin applied with its own Config. The renderer is
// then the registered definition's `output.render`; nothing here re-implements a rendering rule.
//
//   firstPartyRenderer(family, options?)   -> (args, value) => ContentBlock[]   | undefined
//   firstPartyFinalizer(family, options?)  -> (args, value, content) => ContentBlock[] | undefined
//   firstPartyDefinition(family, options?) -> the registered ToolDefinition     | undefined
//   firstPartyRelease(family)              -> {name, version} of the package whose tool it is | undefined
//   FIRST_PARTY_FAMILIES                   -> the families this module can construct
//
// Every tool comes from its 0.1.0-rc.8 package but `terminal_*` and `lsp`, whose packages have no 0.1.0-rc.8
// release: they come from the releases that are published, `@deepseek-ai/dsh-tool-terminal` 0.0.1-rc.5 and
// `@deepseek-ai/dsh-tool-lsp` 0.0.1-rc.1, registered in the same 0.1.0-rc.8 runtime as every other family
// (package.json's `overrides` give them its peers; README.md, "Older releases").
//
// `options` uses the reference's option names (`max_results`, `max_chars`, ...; docs/renderers.md); each is
// mapped to the plugin's own config key. An option a family does not take throws a TypeError, and a value the
// plugin's Config refuses throws the plugin's own error.

import { createRequire } from 'node:module'
import { join } from 'node:path'

import { Context } from '@deepseek-ai/cordis'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import ToolRuntime from '@deepseek-ai/dsh-tools'

import { RELEASE_ROOT } from './release.mjs'

/**
 * A service stand-in: only the members a tool reads while it registers. Tools call their services when they
 * execute, never when they render, so nothing else is needed (a stray call fails as a TypeError).
 */
function standIn(members = {}) {
  return Object.freeze({ ...members })
}

/** Map reference option names to the plugin's config keys; refuse any other option. */
function configFrom(family, options, keys, base = {}) {
  const config = { ...base }
  for (const [option, value] of Object.entries(options)) {
    if (!(option in keys)) throw new TypeError(`first-party: family "${family}" takes no option "${option}"`)
    config[keys[option]] = value
  }
  return config
}

/**
 * The job tools' registry stand-in. A job's `outputLimitBytes` is a property of the job record (set by the
 * producer that started it), so every job it lists carries the configured limit.
 */
function jobsService(outputLimitBytes) {
  return standIn({
    attachController() {},
    onJobDone() {},
    list: () => ({ find: () => (outputLimitBytes === undefined ? undefined : { outputLimitBytes }) }),
  })
}

const fs = (tool) => ({
  package: '@deepseek-ai/dsh-tool-fs',
  tool,
  config: (family, options) => configFrom(family, options, { read_limit: 'readLimit' }),
  services: () => ({ fs: standIn(), attachments: standIn() }),
})

const search = (tool) => ({
  package: '@deepseek-ai/dsh-tool-fs-search',
  tool,
  config: (family, options) =>
    configFrom(
      family,
      options,
      {
        max_results: 'globMaxResults',
        sample_over_cap: 'sampleOverCapGlobResults',
        max_matches: 'grepMaxMatches',
        max_line_bytes: 'grepMaxLineBytes',
      },
      { sampleOverCapGlobResults: false },
    ),
  services: () => ({ subprocess: standIn() }),
})

const jobs = (tool) => ({
  package: '@deepseek-ai/dsh-tool-jobs',
  tool,
  config: (family, options) => {
    configFrom(family, options, { output_limit_bytes: 'outputLimitBytes' })
    return {}
  },
  services: (options) => ({ jobs: jobsService(options.output_limit_bytes ?? undefined) }),
})

const TERMINAL_TOOLS = ['terminal_open', 'terminal_send', 'terminal_read', 'terminal_signal', 'terminal_close', 'terminal_list']

// One plugin registers the six terminal tools; `terminals` is the PTY service they only call when they execute.
const terminal = (tool) => ({
  package: '@deepseek-ai/dsh-tool-terminal',
  tool,
  config: (family, options) => configFrom(family, options, { max_result_bytes: 'maxResultBytes' }),
  services: () => ({ terminals: standIn() }),
})

const SOURCES = {
  read: fs('read'),
  read_image: fs('read_image'),
  write: fs('write'),
  edit: fs('edit'),
  glob: search('glob'),
  grep: search('grep'),
  bash: {
    package: '@deepseek-ai/dsh-tool-bash',
    tool: 'bash',
    config: (family, options) => {
      configFrom(family, options, { escalation_available: 'escalationAvailable' })
      return {}
    },
    // Escalation is advertised exactly when the mounted executor confines (it reports a sandbox mode).
    services: (options) => ({
      shell: standIn(options.escalation_available ? { sandboxMode: 'read-only' } : {}),
      shellEnv: standIn(),
      ...(options.escalation_available ? { sandboxPolicy: standIn() } : {}),
    }),
  },
  todo_write: {
    package: '@deepseek-ai/dsh-tool-todo',
    tool: 'todo_write',
    config: (family, options) => configFrom(family, options, {}, { allowParallelInProgress: false }),
    services: () => ({}),
  },
  ask_user_question: {
    package: '@deepseek-ai/dsh-tool-ask-user',
    tool: 'ask_user_question',
    config: (family, options) => configFrom(family, options, {}),
    services: () => ({ userQuestions: standIn() }),
  },
  exit_plan_mode: {
    package: '@deepseek-ai/dsh-plan-mode',
    tool: 'exit_plan_mode',
    config: (family, options) => configFrom(family, options, {}, { section: 'Plan mode.' }),
    services: () => ({}),
  },
  run_code: {
    // The Code Mode transport belongs to the registry itself: a registry presenting in `code` mode shows it.
    package: '@deepseek-ai/dsh-tools',
    registryOnly: true,
    tool: 'run_code',
    registry: { mode: 'code' },
    config: (family, options) => configFrom(family, options, {}),
    services: () => ({}),
  },
  skill: {
    package: '@deepseek-ai/dsh-tool-skill',
    tool: 'skill',
    config: (family, options) => configFrom(family, options, {}),
    services: () => ({ agents: standIn(), skills: standIn() }),
  },
  web_search: {
    package: '@deepseek-ai/dsh-tool-web',
    tool: 'web_search',
    config: (family, options) => configFrom(family, options, {}),
    services: () => ({ web: standIn() }),
  },
  web_fetch: {
    package: '@deepseek-ai/dsh-tool-web',
    tool: 'web_fetch',
    config: (family, options) => configFrom(family, options, { max_chars: 'fetchMaxOutputChars' }),
    services: () => ({ web: standIn() }),
  },
  job_output: jobs('job_output'),
  job_list: jobs('job_list'),
  job_kill: jobs('job_kill'),
  subagent: {
    package: '@deepseek-ai/dsh-tool-subagent',
    tool: 'subagent',
    config: (family, options) => configFrom(family, options, {}, { provider: 'in-process', maxDepth: 'provider-managed' }),
    services: () => ({
      subagents: standIn({
        getProvider: (name) => ({ name, capabilities: { depthLimit: true } }),
      }),
    }),
  },
  ...Object.fromEntries(TERMINAL_TOOLS.map((tool) => [tool, terminal(tool)])),
  lsp: {
    package: '@deepseek-ai/dsh-tool-lsp',
    tool: 'lsp',
    config: (family, options) =>
      configFrom(family, options, { max_locations: 'maxLocations', max_result_chars: 'maxResultChars' }),
    services: () => ({ lsp: standIn() }),
  },
  workflow: {
    package: '@deepseek-ai/dsh-tool-workflow',
    tool: 'workflow',
    config: (family, options) => configFrom(family, options, { max_result_chars: 'maxResultChars' }),
    services: () => ({ workflowEngine: standIn() }),
  },
  ralph: {
    package: '@deepseek-ai/dsh-tool-ralph',
    tool: 'ralph',
    config: (family, options) => configFrom(family, options, { max_result_chars: 'maxResultChars' }),
    services: () => ({ workflowEngine: standIn(), subagents: standIn() }),
  },
}

/** The families whose original tool this module constructs. */
export const FIRST_PARTY_FAMILIES = Object.freeze(Object.keys(SOURCES))

/** Why a family is not constructible: the tool lives in a package the original does not publish. */
export const NOT_CONSTRUCTIBLE = Object.freeze({
  structured_output: 'structured_output is registered by the in-process subagent driver, which is not published',
})

const require = createRequire(join(RELEASE_ROOT, 'package.json'))

/**
 * The release that judges `family`: `{name, version}` of the installed package whose plugin registers its tool
 * (`@deepseek-ai/dsh-tools` itself for `run_code`), or undefined for a family this module cannot construct.
 */
export function firstPartyRelease(family) {
  if (!Object.hasOwn(SOURCES, family)) return undefined
  const { name, version } = require(`${SOURCES[family].package}/package.json`)
  return Object.freeze({ name, version })
}

const mounted = new Map()

async function mount(family, options) {
  const source = SOURCES[family]
  const key = `${family}\u0000${JSON.stringify(options)}`
  if (!mounted.has(key)) {
    mounted.set(
      key,
      (async () => {
        const config = source.config(family, options)
        const plugin = source.registryOnly ? undefined : await import(source.package)
        const ctx = new Context()
        await ctx.plugin(SystemPrompt)
        await ctx.plugin(ToolRuntime, source.registry ?? {})
        for (const [name, service] of Object.entries(source.services(options))) ctx.provide(name, service)
        if (plugin !== undefined) {
          // A plugin's own Config (schemastery) resolves defaults and refuses bad values, as a deployment's loader does.
          const resolved = plugin.Config === undefined ? config : plugin.Config(config)
          await ctx.plugin(plugin.default ?? plugin, resolved)
        }
        const definition = ctx.tools.get(source.tool)
        if (definition === undefined) throw new Error(`first-party: the "${family}" plugin registered no "${source.tool}" tool`)
        return definition
      })(),
    )
  }
  return mounted.get(key)
}

/** The original's registered tool definition for `family`, or undefined for a family it cannot construct. */
export async function firstPartyDefinition(family, options = {}) {
  if (!Object.hasOwn(SOURCES, family)) return undefined
  return mount(family, options)
}

/** The original's Native render function `(args, value) => ContentBlock[]` for `family`, or undefined. */
export async function firstPartyRenderer(family, options = {}) {
  const definition = await firstPartyDefinition(family, options)
  if (definition === undefined) return undefined
  return (args, value) => definition.output.render(args, value)
}

/**
 * The original's `finalizeContent` for `family` as `(args, value, content) => ContentBlock[]` (the content
 * unchanged when the tool has none or declines), or undefined for a family it cannot construct.
 */
export async function firstPartyFinalizer(family, options = {}) {
  const definition = await firstPartyDefinition(family, options)
  if (definition === undefined) return undefined
  return (args, value, content) => {
    if (definition.finalizeContent === undefined) return content
    // The job tools find the job by the call's `job_id`, which is the id of the job the value reports.
    const jobId = args?.job_id ?? value?.job?.id
    const exec = { name: definition.name, arguments: { ...args, ...(jobId === undefined ? {} : { job_id: jobId }) } }
    const result = value === undefined ? { isError: true, content } : { isError: false, value, content }
    return definition.finalizeContent(exec, result) ?? content
  }
}
