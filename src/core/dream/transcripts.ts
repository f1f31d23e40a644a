/**
 * Agent transcripts as dream evidence: Claude Code's JSONL session files, one JSON object a
 * line (`type` user/assistant, `message` {role, content: a string or blocks of text,
 * tool_use and tool_result}, `sessionId`, `timestamp`, `uuid`). Read line by line from a
 * stream, never a whole file in memory, and never more than MAX_LINE_BYTES of one line: a
 * longer line (a 1 GB file without line breaks) is skipped unread, like a line that is not
 * such an object, and counted. Text from outside tools — web fetches, web searches, MCP
 * servers — is tainted evidence: it is third-party text that reached the agent.
 */
import {createReadStream, readdirSync, statSync} from 'node:fs'
import {join} from 'node:path'

import {badInput} from '../store/errors.js'

/** One piece of text a session saw or said, with where and when. */
export interface Observation {
  session: string
  timestamp: string
  text: string
  tainted: boolean
  /** e.g. `transcript a.jsonl:12 assistant`, `tool_result WebFetch`, `run:s-… notes.md` */
  source: string
}

export interface ReadStats {
  files: number
  lines: number
  /** lines skipped: not JSON, not a message, or too long */
  skipped: number
  /** of those, the lines longer than MAX_LINE_BYTES, skipped without being held in memory */
  too_long?: number
  sessions: Set<string>
}

/** The longest transcript line read (16 MiB: far above a message, far below the memory a dream may use). */
export const MAX_LINE_BYTES = 16 * 1024 * 1024

/**
 * The lines of a file, streamed in 64 KiB chunks: each line's text without its line break
 * (LF or CRLF), or null for a line longer than `max` bytes, whose bytes past the limit are
 * dropped as they are read, so memory stays bounded whatever the file holds.
 */
export async function* streamLines(file: string, max = MAX_LINE_BYTES, onBytes?: (n: number) => void): AsyncGenerator<string | null> {
  let parts: Buffer[] = []
  let size = 0
  let overlong = false
  const line = (): string | null => {
    if (overlong) return null
    const text = (parts.length === 1 ? parts[0] : Buffer.concat(parts, size)).toString('utf8')
    return text.endsWith('\r') ? text.slice(0, -1) : text
  }
  for await (const chunk of createReadStream(file, {highWaterMark: 64 * 1024}) as AsyncIterable<Buffer>) {
    onBytes?.(chunk.length)
    let start = 0
    while (start < chunk.length) {
      const nl = chunk.indexOf(10, start)
      const end = nl < 0 ? chunk.length : nl
      if (!overlong) {
        if (size + end - start > max) {
          overlong = true
          parts = []
          size = 0
        } else if (end > start) {
          // a view, released with the line: its chunk is freed once the line is decoded
          parts.push(chunk.subarray(start, end))
          size += end - start
        }
      }
      if (nl < 0) break
      yield line()
      parts = []
      size = 0
      overlong = false
      start = nl + 1
    }
  }
  if (overlong || size > 0) yield line()
}

function skipLong(stats: ReadStats): void {
  stats.skipped++
  stats.too_long = (stats.too_long ?? 0) + 1
}

/** Tools whose results are text from outside: a web fetch or search, any MCP server's tool. */
export function isOutsideTool(name: string): boolean {
  return name === 'WebFetch' || name === 'WebSearch' || name.startsWith('mcp__')
}

/** Every .jsonl file under the given files and folders (a folder is walked, links are not followed), sorted. */
export function transcriptFiles(inputs: string[]): string[] {
  const out: string[] = []
  const walk = (p: string, given: boolean) => {
    let st
    try {
      st = statSync(p)
    } catch {
      if (given) throw badInput(`Cannot read transcript ${p}.`, 'give a Claude Code transcript (.jsonl) or a folder of them')
      return
    }
    if (st.isDirectory()) {
      for (const n of readdirSync(p).sort()) if (!n.startsWith('.')) walk(join(p, n), false)
    } else if (st.isFile() && (given || p.endsWith('.jsonl') || p.endsWith('.md'))) out.push(p)
  }
  for (const i of inputs) walk(i, true)
  return [...new Set(out)].sort()
}

/**
 * A plain-markdown transcript (`*.md`): one session, named by the file, at the file's
 * modification time; each paragraph one observation. A paragraph under a heading that
 * names an outside tool (`## tool: WebFetch`, `## WebSearch result`, `## mcp__…`) is
 * tainted, as is everything after a heading `## tool` that names no tool.
 */
export async function* readMarkdownTranscript(file: string, since: string, stats: ReadStats, onBytes?: (n: number) => void): AsyncGenerator<Observation> {
  stats.files++
  const session = file.replace(/^.*\//, '').replace(/\.md$/, '').replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 80) || 'markdown'
  const timestamp = statSync(file).mtime.toISOString()
  if (timestamp < since) return
  stats.sessions.add(session)
  let tainted = false
  let para: string[] = []
  let start = 0
  let n = 0
  const flush = function* () {
    if (para.length > 0) yield {session, timestamp, text: para.join('\n'), tainted, source: `transcript ${session}.md:${start}`}
    para = []
  }
  for await (const line of streamLines(file, MAX_LINE_BYTES, onBytes)) {
    n++
    stats.lines++
    if (line === null) {
      skipLong(stats)
      continue
    }
    const heading = /^#{1,6}\s+(.*)$/.exec(line)
    if (heading) {
      yield* flush()
      const h = heading[1]
      const tool = /\b(WebFetch|WebSearch|mcp__\S+)/.exec(h)
      tainted = tool ? isOutsideTool(tool[1]) : /\btool\b/i.test(h)
      continue
    }
    if (line.trim() === '') {
      yield* flush()
      continue
    }
    if (para.length === 0) start = n
    if (para.length < 200) para.push(line)
  }
  yield* flush()
}

type Block = {type?: unknown; text?: unknown; name?: unknown; id?: unknown; tool_use_id?: unknown; content?: unknown}

const textOf = (content: unknown): string => {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((b) => (b && typeof b === 'object' && (b as Block).type === 'text' && typeof (b as Block).text === 'string' ? (b as Block).text as string : '')).filter(Boolean).join('\n')
  return ''
}

/**
 * The observations of one transcript file at or after `since` (ISO time), streamed. The
 * session id is the line's `sessionId` (else the file's name); a tool result is tainted
 * when the tool that produced it (its tool_use, earlier in the file) is an outside tool.
 */
export async function* readTranscript(file: string, since: string, stats: ReadStats, onBytes?: (n: number) => void): AsyncGenerator<Observation> {
  stats.files++
  const toolNames = new Map<string, string>()
  const fallback = file.replace(/^.*\//, '').replace(/\.jsonl$/, '')
  let n = 0
  for await (const line of streamLines(file, MAX_LINE_BYTES, onBytes)) {
    n++
    if (line === null) {
      stats.lines++
      skipLong(stats)
      continue
    }
    if (line.trim() === '') continue
    stats.lines++
    let o: unknown
    try {
      o = JSON.parse(line)
    } catch {
      stats.skipped++
      continue
    }
    if (!o || typeof o !== 'object' || Array.isArray(o)) {
      stats.skipped++
      continue
    }
    const r = o as {type?: unknown; message?: {role?: unknown; content?: unknown}; sessionId?: unknown; timestamp?: unknown}
    if (r.type !== 'user' && r.type !== 'assistant') continue // summaries and other records carry no conversation
    if (!r.message || typeof r.message !== 'object' || typeof r.timestamp !== 'string' || Number.isNaN(Date.parse(r.timestamp))) {
      stats.skipped++
      continue
    }
    const session = typeof r.sessionId === 'string' && /^[A-Za-z0-9._-]{1,80}$/.test(r.sessionId) ? r.sessionId : fallback
    const timestamp = new Date(r.timestamp).toISOString()
    const content = r.message.content
    if (Array.isArray(content)) {
      for (const b of content as Block[]) {
        if (b && b.type === 'tool_use' && typeof b.id === 'string' && typeof b.name === 'string') toolNames.set(b.id, b.name)
      }
    }
    if (timestamp < since) continue
    stats.sessions.add(session)
    const where = `transcript ${fallback}.jsonl:${n}`
    const said = textOf(content)
    if (said) yield {session, timestamp, text: said, tainted: false, source: `${where} ${r.type}`}
    if (Array.isArray(content)) {
      for (const b of content as Block[]) {
        if (!b || b.type !== 'tool_result') continue
        const tool = typeof b.tool_use_id === 'string' ? toolNames.get(b.tool_use_id) ?? 'unknown tool' : 'unknown tool'
        const text = textOf(b.content)
        // a result whose tool is unknown came from somewhere this file does not say: outside text
        if (text) yield {session, timestamp, text, tainted: isOutsideTool(tool) || tool === 'unknown tool', source: `${where} tool_result ${tool}`}
      }
    }
  }
}
