import {closeSync, lstatSync, openSync, readFileSync, rmSync, unlinkSync} from 'node:fs'
import {isIP} from 'node:net'
import {join} from 'node:path'
import {domainToASCII} from 'node:url'

import {EngramError} from '../store/errors.js'
import {writeFileAtomic} from '../store/fsutil.js'
import {mac, privateDir, privateSubfolder, sessionSecret, storeKey} from '../store/private.js'
import {deriveTitle} from '../memory/memory.js'
import {clip} from '../text/clip.js'

/**
 * What the user typed in a session, as far as a write's claim of `direct_chat` needs it
 * (README "Claude Code hooks", STANDARD.md R26). A write says it holds the user's own words;
 * an agent steered by a web page can say so of anything. Where the harness sees every prompt
 * the user submits (Claude Code's UserPromptSubmit hook), the values a fact is made of — an
 * address, a host, an account or phone number, an IBAN, a wallet — can be checked: a write
 * claiming direct_chat that states one no prompt of the session holds did not come from the
 * user, whoever says so, and is read as third-party text.
 *
 * The record is kept in engram's private folder (`<private>/prompts/<store>/<session>.json`,
 * 0600 in 0700 folders), where the confined agent cannot write, and holds no prompt and no
 * value: only MACs of the values' keys, made with the session secret, so the file tells
 * nobody what the user typed and cannot be filled in without the secret.
 */

/**
 * Top-level domains a bare host (no scheme, no mailbox) is read under. A name of two labels
 * (`acme-pay.com`, `evilpay.рф`) is read under a common one, or any internationalised one; a name
 * with a hyphen or three labels (`acme-billing.support`, `db.acme.internal`) under any — but a file
 * extension (`run-tests.sh`, `config.h.in`), and under a top-level domain that is also a common
 * name in code (`logger.info`, `store.top`, `user.email`, `page.click`) only with a hyphen or
 * three labels. A link or a mailbox is read under any top-level domain.
 */
const STRONG_TLDS = new Set(
  ('com net org io ai co us uk de fr nl eu ca au jp cn ru br es ch se dk fi ie nz za mx kr tw hk sg il ' +
    'cz gr tr ro hu sk si hr bg ua by kz ar pe ve ec uy th vn my ph edu gov mil int biz xyz su vip icu tk cloud tech online site ' +
    'pay money bank finance eth').split(' '),
)
/**
 * Top-level domains of short links and pay, chat and profile pages (`paypal.me/…`, `cash.app/…`,
 * `t.me/…`, `bit.ly/…`, `linktr.ee/…`): a two-label name under one is read as a host when a path
 * follows it, as a link written without its scheme (`logger.info` alone stays code).
 */
const LINK_TLDS = new Set('me app ly ee gg to be link page tv fm im gl gd ws la st is lt lv gy ms nu sc cx vu tk ml ga cf gq li info dev top click'.split(' '))
/** File extensions that are also top-level domains or look like them: never a bare host's end. */
const FILE_EXTS = new Set(
  ('sh so zip in br pt cl js ts py rs md go rb pl pm cs ps h c cpp hpp java kt swift yml yaml json toml lock txt log csv tsv xml html htm css ' +
    'scss less svg png jpg jpeg gif webp ico pdf doc docx xls xlsx ppt pptx gz tgz bz2 xz rar tar jar war deb rpm apk exe dll bin dat db sqlite ' +
    'env ini cfg conf bak tmp swp mjs cjs jsx tsx vue lua sql proto pem crt key pub asc sig map wasm lib out ipynb pth onnx pkl ckpt whl egg gem ' +
    'mk am ac patch diff mov mp4 mp3 wav avi mkv tf hcl nix mod sum dockerfile').split(' '),
)
/** Stop words that end no host's first label in prose: "ported it to dot net" is no host. */
const STOP_BEFORE_DOT = new Set('to the a an and or of in on at for with from by into as is it this that'.split(' '))

// Each pattern is linear: no nested quantifiers over the same characters.
// a link is read to 256 characters at most: its host and the start of its path name it (the rest
// is read as text), and a text of links glued end to end stays linear
const URL_TOKEN_RE = /\b[a-z][a-z0-9+.-]{0,15}:[/\\]{2}[^\s"'<>`]{1,256}|(?<![\p{L}\p{N}_:/\\])[/\\]{2}[\p{L}\p{N}[][^\s"'<>`]{0,255}/giu
const EMAIL_RE = /[\p{L}\p{N}._%+-]{1,64}@((?:[\p{L}\p{N}-]{1,63}\.){1,8}(?:\p{L}{2,24}|xn--[a-z0-9-]{1,59}))(?![\p{L}\p{N}-]|\.[\p{L}\p{N}])/giu
const IPV4_RE = /(?<![\w.])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?![\w]|\.\d)/g
const IPV6_RE = /(?<![\w:.])[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}(?![\w:])/gi
const HOST_RE = /(?<![\p{L}\p{N}_@./-])((?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.){1,8}(\p{L}{2,24}|xn--[a-z0-9-]{1,59}))(?![\p{L}\p{N}]|\.[\p{L}\p{N}])([/\\][^\s"'<>`]{0,255})?/giu
// not inside a host, a mailbox or a path (glued to a word it may be: "IBANDE89…"): "aa.wh92.internal," is a host whose labels read as an IBAN whose check digits
// hold one time in 97 (a property test found it)
const IBAN_RE = /(?<![0-9_.@/-])[A-Z]{2}\d{2}(?:[ .-]?[A-Z0-9]{4}){2,7}(?:[ .-]?[A-Z0-9]{1,4})?(?![A-Z0-9])/gi
const WALLET_RE = /\b(?:0x[0-9a-f]{40}|(?:bc1|ltc1|tb1)[ac-hj-np-z02-9]{25,62}|bitcoincash:[qp][ac-hj-np-z02-9]{41})\b/gi
// groups of digits joined by spaces (up to three), a dot, a dash (spaced or not), a slash, an
// apostrophe or underscore, or a comma before three digits (an account, a phone, a card, a large
// amount, however grouped)
const NUMBER_RE = /(?<![\p{L}\p{N}_]|\p{N}[.,/:-])\+?\d+(?:(?:[ \t]{1,3}|[ ]?-[ ]?|[./'_]|,(?=\d{3}(?!\d)))\d+){0,15}(?![\p{L}\p{N}_]|[.,/:-]\d)/gu
/** A number glued to a word (`EUR8812334577`, `acct8812334577`): one run of letters, one of eight digits or more. */
const GLUED_NUMBER_RE = /(?<![\p{L}\p{N}_])\p{L}{1,12}(\d{8,})(?![\p{L}\p{N}_])/gu
const DAY = String.raw`(?:0?[1-9]|[12]\d|3[01])`
const MONTH = String.raw`(?:0?[1-9]|1[0-2])`
const DATE_RE = new RegExp(String.raw`^(?:\d{4}([-./])${MONTH}\1${DAY}|${DAY}([-./])${MONTH}\2\d{4}|${MONTH}([-./])${DAY}\3\d{4}|(?:19|20)\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01]))$`)
const INVISIBLE = /[\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]/g
/** A trailing run a link does not end with in prose: `(see https://x.example/a).` */
const TRAILING = /[.,;:!?)\]}'"*_]+$/
const ENTITIES: Record<string, string> = {period: '.', commat: '@', sol: '/', colon: ':', num: '#', percnt: '%', amp: '&', lowbar: '_', hyphen: '-', dash: '-'}

/** HTML comments out of the text, in one pass (a lazy pattern over many unclosed `<!--` would be quadratic). */
function withoutComments(text: string, hidden: string[]): string {
  let out = ''
  let at = 0
  for (;;) {
    const open = text.indexOf('<!--', at)
    if (open < 0) break
    const close = text.indexOf('-->', open + 4)
    if (close < 0) break
    out += text.slice(at, open)
    // what a comment says is read too, on a line of its own (a raw reader sees it)
    hidden.push(text.slice(open + 4, close))
    at = close + 3
  }
  return at === 0 ? text : out + text.slice(at)
}

/**
 * The text as a reader takes its values: compatibility forms as their plain characters (fullwidth
 * digits, letters and full stops, mathematical letters), every dash as `-`, invisible characters
 * gone, and a defanged host or address (`acme[.]example`, `acme (dot) example`, `acme . example`,
 * `ap[at]acme.example`) as written plainly. A look-alike letter of another script stays itself:
 * `аcme.example` with a Cyrillic а is another host than the one the user typed, and is read as one.
 */
function readable(text: string, depth = 0): string {
  // what markup hides from a rendered view but a raw reader (a model, memory read back) sees: read
  // after the text, on lines of its own (markup inside markup twice at most: each level is linear)
  const hidden: string[] = []
  const plain = undoSpellings(withoutComments(text.normalize('NFKC'), hidden), hidden)
  if (hidden.length === 0) return plain
  const more = hidden.join('\n')
  return `${plain}\n${depth < 2 ? readable(more, depth + 1) : undoSpellings(more, [])}`
}

function undoSpellings(text: string, hidden: string[]): string {
  return text
    .replace(INVISIBLE, '')
    // escapes a reader or a model undoes: HTML entities, backslashes, percent escapes
    .replace(/&#(\d{1,7});|&#x([0-9a-f]{1,6});|&([a-z]{2,8});/gi, (m, d: string, x: string, name: string) => {
      const code = d ? Number(d) : x ? parseInt(x, 16) : -1
      if (code >= 0) return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m
      return ENTITIES[name.toLowerCase()] ?? m
    })
    // …but in a link's authority a backslash is a slash to a browser: `https://evil.example\@paypal.me/x` is on evil.example
    .replace(/(\b[a-z][a-z0-9+.-]{0,15}:[/\\]{2}[^\s"'<>`/\\?#]{0,256})\\/gi, '$1/')
    .replace(/\\([./@:])/g, '$1')
    .replace(/%(2[1-9a-f]|[3-7][0-9a-e])/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    // A tag is dropped from the text (`**evil**.com`, `evil<b></b>.com` read whole), and what it
    // holds is read after it: its attributes (`<a href="https://evil.example">ours.example</a>` goes
    // to evil.example), an autolink (`<https://…>`, `<ap@…>`, `<tel:…>`). Inside a link it ends the
    // link, as a renderer ends it (`https://evil.example<b>@ours.example</b>` is on evil.example).
    .replace(/<\/?[a-z][^<>\n]{0,200}>/gi, (tag: string, at: number, whole: string) => {
      // the tag's whole inside, its name too (`<bc1q…>` is an autolink, not a tag), attributes' quotes as blanks
      hidden.push(tag.slice(tag.startsWith('</') ? 2 : 1, -1).replace(/[="']/g, ' '))
      // (a line break: no later step joins across it, as ` @` is joined for a spelt-out mailbox)
      return /[a-z][a-z0-9+.-]{0,15}:[/\\]{2}[^\s<>]{0,256}$/i.test(whole.slice(Math.max(0, at - 280), at)) ? '\n' : ''
    })
    .replace(/[\u3002\uff61]/g, '.')
    .replace(/[\u2010-\u2015\u2212\ufe58\ufe63]/g, '-')
    // emphasis inside a name: `**evil-pay**.com`
    .replace(/(?<![*_~])[*_~]+(?=[.@][\p{L}\p{N}])|(?<=[\p{L}\p{N}][.@])[*_~]+/gu, '')
    // a phone's area code in brackets: `(415) 555-0132`
    .replace(/\((\d{1,4})\)[ \t]?(?=\d)/g, '$1 ')
    // defanged: each run of blanks is read from its start only (a lookbehind), so a long run stays linear
    .replace(/(?<![ \t])[ \t]*[[({][ \t]*(?:\.|dot)[ \t]*[\])}][ \t]*/gi, '.')
    .replace(/(?<![ \t])[ \t]*[[({][ \t]*(?:@|at)[ \t]*[\])}][ \t]*/gi, '@')
    // a mailbox spelt out whole: `evilguy at gmail dot com`
    .replace(/(?<![\p{L}\p{N}._+-])([\p{L}\p{N}._+-]{1,64})[ \t]+at[ \t]+(?=[\p{L}\p{N}-]{1,63}(?:[ \t]+dot[ \t]+[\p{L}\p{N}-]{1,63}){1,8}(?![\p{L}\p{N}-]))/giu, '$1@')
    .replace(/(?<![\p{L}\p{N}-])([\p{L}\p{N}-]{1,63})[ \t]+dot[ \t]+(?=[\p{L}\p{N}])/giu, (m, word: string) => (STOP_BEFORE_DOT.has(word.toLowerCase()) ? m : `${word}.`))
    .replace(/(?<=[\p{L}\p{N}])(?:[ \t]+\.[ \t]*|\.[ \t]+)(?=([a-z]{2,24})\b)/giu, (m, tld: string) => (STRONG_TLDS.has(tld.toLowerCase()) ? '.' : m))
    .replace(/(?<=[\p{L}\p{N}])[ \t]+@(?=[\p{L}\p{N}])/gu, '@')
}

/** One value a text states: how the text writes it, and the keys it is compared by (any one typed attests it). */
export interface StatedValue {
  /** what the value is compared with a prompt's by: typed when a prompt holds any of them */
  keys: string[]
  text: string
  /** the value itself, in each form the text writes it under these keys (a whole link, scheme, port, path, query and fragment kept; a number with all its digits): what the lines of curated memory an update keeps must state, every one, for it to be recalled (recalledValues) */
  exacts: string[]
}

/** A host as its key: ASCII (an internationalised or look-alike name as punycode), lower-case, without `www.`. */
function hostKey(host: string): string | undefined {
  const ascii = domainToASCII(host.replace(/\.$/, '').toLowerCase())
  return ascii ? `host:${ascii.replace(/^www\./, '')}` : undefined
}

/**
 * Hosts whose paths belong to different people (code, paste and file hosting, documents, social
 * sites): a user who names the host has not named everything under it.
 */
const PATH_SHARED = new Set(
  ('github.com gist.github.com raw.githubusercontent.com objects.githubusercontent.com gitlab.com bitbucket.org codeberg.org sourceforge.net ' +
    'pastebin.com paste.ee hastebin.com rentry.co controlc.com ghostbin.com termbin.com transfer.sh ' +
    'docs.google.com drive.google.com sites.google.com forms.gle dropbox.com dl.dropboxusercontent.com onedrive.live.com 1drv.ms box.com mega.nz wetransfer.com we.tl ' +
    'npmjs.com pypi.org hub.docker.com huggingface.co replit.com codepen.io jsfiddle.net glitch.com notion.so medium.com substack.com ' +
    'twitter.com x.com linkedin.com youtube.com youtu.be reddit.com discord.com discord.gg t.me telegram.me facebook.com instagram.com tiktok.com ' +
    's3.amazonaws.com storage.googleapis.com blob.core.windows.net bit.ly tinyurl.com t.co is.gd ' +
    'ghcr.io docker.io registry-1.docker.io quay.io gcr.io public.ecr.aws registry.gitlab.com crates.io pkg.go.dev proxy.golang.org rubygems.org ' +
    'registry.npmjs.org registry.yarnpkg.com files.pythonhosted.org api.github.com codeload.github.com raw.github.com gist.githubusercontent.com ' +
    'web.archive.org archive.org ' +
    // pay, tip and booking pages, CDNs serving any package (an attacker's read of round twenty)
    'paypal.me paypal.com buy.stripe.com checkout.stripe.com donate.stripe.com ko-fi.com patreon.com buymeacoffee.com gofundme.com venmo.com account.venmo.com ' +
    'cash.app revolut.me monzo.me wise.com linktr.ee calendly.com cal.com unpkg.com cdn.jsdelivr.net esm.sh cdnjs.cloudflare.com git.sr.ht ' +
    'firebasestorage.googleapis.com m.me wa.me square.link checkout.square.site invoice.stripe.com buy.paddle.com commerce.coinbase.com gumroad.com ' +
    'opencollective.com liberapay.com bunq.me tikkie.me send.monobank.ua zoom.us calendar.google.com forms.office.com forms.google.com ' +
    'hooks.slack.com webhook.site gofile.io mediafire.com goo.gl rebrand.ly icloud.com').split(' '),
)
/** Shared hosts whose paths are names compared without case (owners, repositories, packages). */
const CASELESS_PATHS = new Set(
  ('github.com gist.github.com gitlab.com registry.gitlab.com bitbucket.org codeberg.org sourceforge.net npmjs.com registry.npmjs.org pypi.org ' +
    'crates.io rubygems.org hub.docker.com docker.io ghcr.io quay.io pkg.go.dev huggingface.co').split(' '),
)
/** A shared host: listed, or a regional object store (`s3.eu-west-1.amazonaws.com`). */
const isPathShared = (host: string) => {
  // a listed host or any name under it (`app.box.com`, `eu.mediafire.com`)
  for (let h = host; h.includes('.'); h = h.slice(h.indexOf('.') + 1)) if (PATH_SHARED.has(h)) return true
  return /^s3[.-][a-z0-9-]+\.amazonaws\.com$/.test(host)
}

/**
 * What a link names: its host, and where it has a path, every prefix of the path (lower-case, by
 * segments). A write's link is typed when the user typed its host — or, on a host whose paths
 * are different people's (PATH_SHARED), a link on it whose path the write's path starts with
 * (`github.com/acme` attests `github.com/acme/repo/issues`; `github.com` alone does not attest
 * `github.com/attacker/tool`, nor `docs.google.com/document/d/ours` another document).
 */
function linkKeys(link: string): {host?: string; paths: string[]; typed?: string[]; shared?: boolean; exact?: string} {
  let u: URL
  try {
    u = new URL(/^[/\\]{2}/.test(link) ? `http:${link}` : link)
  } catch {
    // a link a parser refuses (a bad port, a stray character) still names the host a reader sees
    const authority = /^(?:[a-z][a-z0-9+.-]*:)?[/\\]{2}([^/\\?#]*)/i.exec(link)?.[1] ?? ''
    const name = authority.slice(authority.lastIndexOf('@') + 1).replace(/:[^:]*$/, '').replace(/[^\p{L}\p{N}.-]+$/u, '')
    const host = /[\p{L}]/u.test(name) && name.includes('.') ? hostKey(name.replace(/[^\p{L}\p{N}.-]/gu, '')) : undefined
    return host ? {host, paths: [], exact: `link:${link}`} : {paths: []}
  }
  const name = u.hostname
  if (!name) return {paths: []}
  const host = name.startsWith('[') ? `ip6:${name.slice(1, -1)}` : /^\d{1,3}(?:\.\d{1,3}){3}$/.test(name) ? `ip:${name}` : hostKey(name)
  if (!host) return {paths: []}
  const base = host.slice(host.indexOf(':') + 1)
  const shared = isPathShared(base)
  // a shared host's paths keep their case (`bit.ly/3xYzAbC` is not `bit.ly/3XyZaBc`), but for code
  // hosts, whose names are caseless; another host's are compared lower-cased
  const segments = (shared && !CASELESS_PATHS.has(base) ? u.pathname : u.pathname.toLowerCase()).split('/').filter((s) => s !== '')
  const prefixes = segments.map((_, i) => `url:${base}/${segments.slice(0, i + 1).join('/')}`)
  const full = `${base}/${segments.join('/')}`
  // A query may name the resource (`drive.google.com/uc?id=…`, `watch?v=…`): a link with one is
  // typed by that very link, or by a typed prefix of its path shorter than the whole; typed with a
  // query, a path attests itself without one (`urlq:`) but not with another query.
  const query = u.search.length > 1 ? u.search : ''
  const paths = query ? [...prefixes.slice(0, -1), `url:${full}${query}`] : segments.length > 0 ? [...prefixes, `urlq:${full}`] : []
  const typed = [host, ...(query ? [`url:${full}${query}`, `urlq:${full}`] : segments.length > 0 ? [`url:${full}`] : [])]
  // the link itself, as a browser resolves it, every part kept (`paypal.me/acmeshop`, `drive.google.com/uc?id=…`, `#/pay/…`)
  return {host, paths, typed, shared, exact: `link:${u.href}`}
}

/**
 * A number's keys: its digits without leading zeros (`020 7946 0958` is `02079460958` is
 * `2079460958`), however grouped; in the international form, as below. Any other digit more or
 * less is another number: an account with a digit put in front is not the account the user typed.
 */
function numberKeys(shown: string, asPrompt: boolean): string[] {
  const digits = shown.replace(/\D/g, '').replace(/^0+/, '')
  if (!shown.startsWith('+')) return asPrompt ? [`number:${digits}`, `national:${digits}`] : [`number:${digits}`]
  // Typed in the international form, the number is itself (`intl:`) and stands for its national form
  // too (`+44 20 7946 0958` types `020 7946 0958`). Written in it, it is typed by that very form, or
  // by a national form typed as such (`national:`: the user named no country, so any is taken) —
  // never by digits that only look alike: `+20 7946 0958` is in Egypt, not the typed `020 7946 0958`
  // or `+44 20 7946 0958`, and `+9 44 …`, `+7 20 7946 0958` are other numbers.
  const rests: string[] = []
  for (let cc = 1; cc <= 3 && digits.length - cc >= 6; cc++) rests.push(digits.slice(cc).replace(/^0+/, ''))
  return asPrompt
    ? [`intl:${digits}`, `number:${digits}`, ...rests.map((r) => `number:${r}`)]
    : [`intl:${digits}`, ...rests.map((r) => `national:${r}`)]
}

/**
 * A range, a ratio, a decimal or a version, not an identifier: two numbers a dash joins, the first
 * no larger and about as long (`132-139`, `30000-32767`; `555-0132` is a phone); two a slash
 * joins, the first no larger (`496/500`, `1,008/1,257`); a decimal (`2.20`, `0.92-0.95`; not
 * `4471.9920`); groups of three digits at most joined by dots (`535.104.05`); two short groups a
 * space joins (`200 200`).
 */
function measure(shown: string): boolean {
  const num = (g: string) => Number(g.replace(/[^\d.]/g, ''))
  const two = (sep: RegExp) => {
    const parts = shown.split(sep)
    return parts.length === 2 ? parts : undefined
  }
  const dash = two(/[ ]?-[ ]?/)
  if (dash && !/[ ./]/.test(shown.replace(/[ ]?-[ ]?/, '')) && num(dash[0]) <= num(dash[1]) && Math.abs(dash[0].length - dash[1].length) <= 1) return true
  const slash = two(/\//)
  if (slash && num(slash[0].replace(/,/g, '')) <= num(slash[1].replace(/,/g, ''))) return true
  const decimal = /^\d{1,4}\.\d{1,3}$/
  const pieces = shown.split(/[ ]?[-/][ ]?/)
  if (shown.includes('.') && pieces.every((p) => decimal.test(p) || /^\d{1,4}$/.test(p)) && pieces.some((p) => decimal.test(p))) return true
  if (/^\d{1,3}(?:\.\d{1,3})+$/.test(shown)) return true
  const spaced = shown.split(/[ \t]+/)
  return spaced.length === 2 && spaced.every((g) => /^\d{1,3}$/.test(g))
}

/**
 * A run of numbers split where blanks part two groups of five digits or more: those are numbers
 * side by side (`8812334577 4471992013`, `86400000 268435456`), not the groups of one (`+44 20
 * 7946 0958`, `44719920 13`).
 */
function apart(run: string): string[] {
  const parts = run.split(/([ \t]+)/)
  const out: string[] = []
  let current = parts[0]
  const lastGroup = (t: string) => /(\d+)\D*$/.exec(t)?.[1].length ?? 0
  const firstGroup = (t: string) => /^\D*(\d+)/.exec(t)?.[1].length ?? 0
  for (let i = 1; i < parts.length; i += 2) {
    const next = parts[i + 1]
    if (lastGroup(current) >= 5 && firstGroup(next) >= 5) {
      out.push(current)
      current = next
    } else current += parts[i] + next
  }
  out.push(current)
  return out
}

/** Code's round numbers, not identifiers: sizes and timeouts written as one run (`86400000`, `268435456`). */
function roundNumber(digits: string): boolean {
  if (/000$/.test(digits)) return true
  const n = Number(digits)
  return Number.isSafeInteger(n) && n >= 1 << 20 && Number.isInteger(Math.log2(n))
}

/** An IBAN whose check digits hold (ISO 13616, mod 97): a random code of the same shape is none. */
function ibanHolds(iban: string): boolean {
  const moved = `${iban.slice(4)}${iban.slice(0, 4)}`.replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55))
  let r = 0
  for (const d of moved) r = (r * 10 + Number(d)) % 97
  return r === 1
}

/**
 * The values a text states (read as `readable` says), each with the keys it is compared by:
 * links (by host and path), hosts (bare under a known top-level domain), mailboxes, IPv4 and IPv6
 * addresses, IBANs, wallets, and numbers — of six digits or more when grouped (an account, a
 * phone, a card, a sort code, a large amount), eight or more when written as one run (so that
 * code's sizes and timeouts are no value) — compared by their digits, a leading zero or an
 * international form's country code aside (numberKeys); dates and `#123456` references are not
 * numbers here. Names, words
 * and small amounts are not values. `asPrompt` reads a prompt: the domain of each mailbox is
 * keyed as a host too (a user who typed `ap@acme.example` named acme.example), and a link as its
 * host and each of its path prefixes.
 */
export function statedValues(written: string, asPrompt = false): StatedValue[] {
  const text = readable(written)
  const out = new Map<string, StatedValue>()
  const add = (keys: string[], shown: string, exact = keys[0]) => {
    if (keys.length === 0) return
    const id = keys.join('\n')
    const have = out.get(id)
    // one value per keys, with every form it is written in (two links on one host: both must be recalled)
    if (!have) out.set(id, {keys, text: clip(shown, 60), exacts: [exact]})
    else if (!have.exacts.includes(exact)) have.exacts.push(exact)
  }
  // as a prompt every key stands alone: each is something the user typed
  const addEach = (keys: string[], shown: string) => {
    if (asPrompt) for (const k of keys) add([k], shown)
    else add(keys, shown)
  }
  // spans already read as one value are not read again as a part of another (a mask: each
  // check costs the match's length, so the whole stays linear however many values there are)
  const taken = new Uint8Array(text.length)
  const free = (a: number, b: number) => {
    for (let i = a; i < b; i++) if (taken[i]) return false
    return true
  }
  const take = (a: number, b: number) => taken.fill(1, a, b)
  const link = (token: string, shown: string, whole = token) => {
    const {host, paths, typed, shared, exact: own} = linkKeys(token)
    // as itself the link keeps what a markdown reader would strip from its end (`…/acmeshop_` is another handle)
    const exact = whole === token ? own : (linkKeys(whole).exact ?? own)
    if (!host) return
    // a prompt's link names its host and its whole path; a write's link is typed by its host, or
    // on a shared host by a typed link whose path its own path starts with
    if (asPrompt) addEach(typed ?? [host], shown)
    else add(shared && paths.length > 0 ? paths : [host], shown, exact ?? host)
  }

  // A link's scheme and host are its own; its path, query and fragment are read for values like
  // any text (a mailbox in a query, a second link behind a redirect), so only the part up to the
  // host is taken, and the scan goes on from there.
  const links = new RegExp(URL_TOKEN_RE.source, URL_TOKEN_RE.flags)
  for (let m = links.exec(text); m; m = links.exec(text)) {
    const token = m[0].replace(TRAILING, '')
    link(token, token, m[0].replace(/[.,;:!?)\]}'"]+$/, ''))
    const authority = /^(?:[a-z][a-z0-9+.-]*:)?[/\\]{2}[^/\\?#]*/i.exec(token)?.[0].length ?? token.length
    take(m.index, m.index + authority)
    links.lastIndex = m.index + Math.max(authority, 1)
  }
  for (const m of text.matchAll(EMAIL_RE)) {
    if (!free(m.index, m.index + m[0].length)) continue
    const domain = hostKey(m[1])
    if (!domain) continue
    add([`mail:${m[0].slice(0, m[0].lastIndexOf('@')).toLowerCase()}@${domain.slice(5)}`], m[0])
    if (asPrompt) add([domain], m[1])
    take(m.index, m.index + m[0].length)
  }
  for (const m of text.matchAll(WALLET_RE)) {
    if (!free(m.index, m.index + m[0].length)) continue
    add([`wallet:${m[0].toLowerCase()}`], m[0])
    take(m.index, m.index + m[0].length)
  }
  for (const m of text.matchAll(IBAN_RE)) {
    const iban = m[0].replace(/[ .-]/g, '').toUpperCase()
    if (!free(m.index, m.index + m[0].length) || !ibanHolds(iban)) continue
    add([`iban:${iban}`], m[0])
    take(m.index, m.index + m[0].length)
  }
  for (const m of text.matchAll(IPV4_RE)) {
    if (!free(m.index, m.index + m[0].length)) continue
    if (m.slice(1, 5).some((o) => Number(o) > 255)) continue
    take(m.index, m.index + m[0].length)
    // this machine (loopback, "any"), and a version number of four parts, name no one's host
    if (m[1] === '127' || m[0] === '0.0.0.0' || /\bv(?:ersion)?[ \t]*$/i.test(text.slice(Math.max(0, m.index - 12), m.index))) continue
    add([`ip:${m[0]}`], m[0])
  }
  for (const m of text.matchAll(IPV6_RE)) {
    if (!free(m.index, m.index + m[0].length) || !/[0-9a-f]/i.test(m[0]) || isIP(m[0]) !== 6) continue
    take(m.index, m.index + m[0].length)
    const {host} = linkKeys(`http://[${m[0]}]/`)
    if (host && host !== 'ip6:::1') add([host], m[0])
  }
  // as for links, a bare host's path is read too: the scan goes on from the end of its name
  const hosts = new RegExp(HOST_RE.source, HOST_RE.flags)
  for (let m = hosts.exec(text); m; m = hosts.exec(text)) {
    hosts.lastIndex = m.index + m[1].length
    if (!free(m.index, m.index + m[1].length)) continue
    const tld = m[2].toLowerCase()
    const name = m[1]
    const labels = name.split('.').length
    const international = /^xn--|[^\x00-\x7f]/.test(tld)
    const pathed = m[3] !== undefined && m[3].replace(TRAILING, '').length > 1
    const host = !FILE_EXTS.has(tld) && (STRONG_TLDS.has(tld) || international || name.includes('-') || labels >= 3 || (pathed && LINK_TLDS.has(tld)))
    // a method call (`logger.info(`) is code, not a host
    if (!host || text[m.index + m[0].length] === '(') continue
    // a host with a path is a link without its scheme (`github.com/attacker/tool`)
    const token = pathed ? m[0].replace(TRAILING, '') : name
    if (token !== name) link(`http://${token}`, token)
    else {
      const key = hostKey(name)
      if (key) add([key], name)
    }
    take(m.index, m.index + name.length)
  }
  for (const m of text.matchAll(GLUED_NUMBER_RE)) {
    if (!free(m.index, m.index + m[0].length) || roundNumber(m[1])) continue
    add([`number:${m[1].replace(/^0+/, '')}`], m[0])
    take(m.index, m.index + m[0].length)
  }
  for (const m of text.matchAll(NUMBER_RE)) {
    if (!free(m.index, m.index + m[0].length)) continue
    // a reference (`#104233`) is an issue's number, unless it is as long as an account
    if (text[m.index - 1] === '#' && m[0].replace(/\D/g, '').length < 8) continue
    for (const shown of apart(m[0])) {
      const digits = shown.replace(/\D/g, '')
      const grouped = /\d\D+\d/.test(shown)
      if (digits.length < (grouped ? 6 : 8) || DATE_RE.test(shown) || measure(shown) || (!grouped && roundNumber(digits))) continue
      // as itself, a number is all it is written with (`+44 …` is not `020 …`, `0012345678` not `12345678`)
      const keys = numberKeys(shown, asPrompt)
      if (asPrompt) addEach(keys, shown)
      else add(keys, shown, `number:${shown.startsWith('+') ? '+' : ''}${digits}`)
    }
  }
  return [...out.values()]
}

/** What a session's prompts hold, as the write path asks it. */
export interface PromptRecord {
  /** a record of this session is on this machine (a store reviewed on another host has none) */
  found: boolean
  /** how many prompts were recorded */
  prompts: number
  has(key: string): boolean
}

const promptsDir = (storeRoot: string) => join(privateDir(), 'prompts', storeKey(storeRoot))
const recordFile = (storeRoot: string, session: string) => join(promptsDir(storeRoot), `${session}.json`)
const keyMac = (secret: Buffer, session: string, key: string) => mac(secret, 'engram-prompt-value', session, key)

/** Keys kept per session at most; past it the oldest go (a value typed long ago is read as not typed). */
const MAX_KEYS = 50_000
/** Of a prompt, only this much is read for values (a pasted log of megabytes adds nothing a fact would quote). */
const MAX_PROMPT_CHARS = 1 << 20

interface StoredRecord {
  store: string
  session: string
  prompts: number
  values: string[]
  updated: string
}

function readRecord(storeRoot: string, session: string): StoredRecord | undefined {
  const file = recordFile(storeRoot, session)
  try {
    const st = lstatSync(file)
    if (!st.isFile() || (st.mode & 0o077) !== 0) return undefined
    const r = JSON.parse(readFileSync(file, 'utf8')) as Partial<StoredRecord>
    if (r.session !== session || typeof r.prompts !== 'number' || !Array.isArray(r.values)) return undefined
    return {store: storeRoot, session, prompts: r.prompts, values: r.values.filter((v): v is string => typeof v === 'string'), updated: String(r.updated ?? '')}
  } catch {
    // none, unreadable, torn or edited: no prompt is known, so no value is taken as typed (fail closed)
    return undefined
  }
}

/**
 * Record the values of one prompt the user submitted (the UserPromptSubmit hook). Durable
 * (fsync'd) before the hook answers, so a write the agent makes after the prompt finds it.
 * Returns how many values the prompt states.
 */
export function recordPrompt(storeRoot: string, session: string, prompt: string): number {
  const secret = sessionSecret(false)
  privateSubfolder('prompts', storeKey(storeRoot))
  const found = statedValues(prompt.slice(0, MAX_PROMPT_CHARS), true)
  // prompts a harness submits at once are each kept: the record is read and written under a lock
  withRecordLock(recordFile(storeRoot, session), () => addValues(storeRoot, session, secret, found))
  // values as the user wrote them (a mailbox and its domain are two; a number's forms one)
  return new Set(found.map((v) => v.text)).size
}

function addValues(storeRoot: string, session: string, secret: Buffer, found: StatedValue[]): void {
  const have = readRecord(storeRoot, session)
  const values = new Set(have?.values ?? [])
  for (const v of found) {
    for (const key of v.keys) {
      const m = keyMac(secret, session, key)
      // a value typed again moves to the newest end
      values.delete(m)
      values.add(m)
    }
  }
  const kept = [...values].slice(-MAX_KEYS)
  const record: StoredRecord = {store: storeRoot, session, prompts: (have?.prompts ?? 0) + 1, values: kept, updated: new Date().toISOString()}
  writeFileAtomic(recordFile(storeRoot, session), `${JSON.stringify(record)}\n`, 0o600, {fsync: true})
}

/** How long a prompt waits for another's update of the same record; a lock older than LOCK_STALE_MS was left by a dead process. */
const LOCK_WAIT_MS = 10_000
const LOCK_STALE_MS = 30_000

/** Run `fn` holding `<file>.lock` (made exclusively; a stale one is taken over). */
function withRecordLock<T>(file: string, fn: () => T): T {
  const lock = `${file}.lock`
  const deadline = Date.now() + LOCK_WAIT_MS
  const pause = new Int32Array(new SharedArrayBuffer(4))
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600))
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      try {
        // left by a process that died (a folder or a link in its place too: the private folder is the owner's)
        if (Date.now() - lstatSync(lock).mtimeMs > LOCK_STALE_MS) rmSync(lock, {recursive: true, force: true})
      } catch {
        // gone meanwhile: try again
      }
      if (Date.now() > deadline) {
        throw new EngramError('conflict', `The prompts record of this session is being updated by another process (${lock}); nothing recorded.`, {
          nextStep: `try again; a lock left by a process that died is taken over after ${LOCK_STALE_MS / 1000} s`,
        })
      }
      Atomics.wait(pause, 0, 0, 10 + Math.floor(Math.random() * 20))
    }
  }
  try {
    return fn()
  } finally {
    try {
      unlinkSync(lock)
    } catch {
      // removed as stale by another: nothing to undo
    }
  }
}

/** The values the user typed in a session, to ask of; an empty record when none was kept (fail closed). */
export function promptRecord(storeRoot: string, session: string): PromptRecord {
  const r = readRecord(storeRoot, session)
  if (!r) return {found: false, prompts: 0, has: () => false}
  let secret: Buffer
  try {
    secret = sessionSecret(false)
  } catch {
    return {found: false, prompts: r.prompts, has: () => false}
  }
  const values = new Set(r.values)
  return {found: true, prompts: r.prompts, has: (key) => values.has(keyMac(secret, session, key))}
}

/**
 * What a write's claim of direct_chat is checked on: its path (its folders and name), title, tags
 * and body (redacted), and what the blobs encoded in it decode to (a proposal's, as the vote reads
 * them: prepare.ts). A title engram made from the body's first line (the default, clipped at 80
 * characters) is not read: its values are the body's, and a clipped one would be cut
 * (`ap@acme.ex…`). Any other title is read whole, an ellipsis the writer typed included.
 */
export function claimText(title: string, tags: readonly string[], body: string, path = '', decoded: readonly string[] = []): string {
  const t = title === deriveTitle(body) ? '' : title
  return [`${path.replace(/\.md$/, '').replace(/\//g, ' ')}`, t, tags.join(' '), body, ...decoded].join('\n')
}

/**
 * Words by which a memory names a value to warn against it, or as a thing of the past, in the
 * languages a user most likely writes them in: such a memory vouches for none of its values (a
 * blocklist, a closed account, the address before a move). An open list: a memory that warns in
 * other words vouches as any other, which is why an update must keep the memory's line whole.
 */
const NOT_VOUCHED = new RegExp(
  '\\b(?:' +
    [
      'never', 'not', 'no', 'no longer', 'don[\'’]?t', 'doesn[\'’]?t', 'won[\'’]?t', 'can[\'’]?t', 'cannot', 'ignore\\w*', 'avoid\\w*', 'refus\\w*', 'stay away',
      'phish\\w*', 'scam\\w*', 'fraud\\w*', 'spam\\w*', 'fake\\w*', 'impost\\w*', 'imperson\\w*', 'malicious', 'suspicious', 'suspect\\w*', 'hack\\w*',
      'attack\\w*', 'compromis\\w*', 'stolen', 'unverified', 'report\\w*', 'block\\w*', 'blacklist\\w*', 'deny ?list\\w*', 'warn\\w*', 'beware', 'caution',
      'closed', 'old', 'former\\w*', 'previous\\w*', 'deprecated', 'retired', 'obsolete', 'invalid', 'wrong', 'incorrect', 'instead', 'until', 'used to',
      'replaced', 'superseded', 'went',
      // de, fr, es, pt, it, nl
      'nicht', 'nie', 'niemals', 'kein\\w*', 'betrug\\w*', 'warnung', 'achtung', 'gefälscht\\w*', 'alt\\w*',
      'ne', 'pas', 'jamais', 'arnaque\\w*', 'attention', 'faux', 'ancien\\w*',
      'nunca', 'estafa\\w*', 'cuidado', 'falso', 'antigu\\w*',
      'não', 'nao', 'golpe\\w*', 'antig\\w*',
      'non', 'mai', 'truffa\\w*', 'vecchi\\w*',
      'niet', 'nooit', 'oplichting\\w*', 'oud\\w*',
    ].join('|') +
    ')\\b',
  'iu',
)

/** A line as compared: read as a reader takes it, blanks collapsed. */
const lineOf = (line: string) => readable(line).replace(/\s+/g, ' ').trim()

/**
 * The values an update recalls from the curated memory it changes (their `exacts`): those stated by the
 * lines of that memory's body it keeps word for word (as read: `lineOf`), and only when the memory
 * names no value to warn against it or as past anywhere (NOT_VOUCHED: title, tags and body). A
 * line kept whole keeps what it says of its values; a value moved to another line, put in another
 * role or under another heading is not recalled, and is judged as any untyped value.
 */
export function recalledValues(memory: {title: string; tags: readonly string[]; body: string}, writtenBody: string): Set<string> {
  if (NOT_VOUCHED.test(readable(`${memory.title}\n${memory.tags.join(' ')}\n${memory.body}`))) return new Set()
  const lines = new Set(memory.body.split('\n').map(lineOf).filter((l) => l !== ''))
  const kept = writtenBody.split('\n').filter((l) => lines.has(lineOf(l)))
  return new Set(statedValues(kept.join('\n')).flatMap((v) => v.exacts))
}

/** The values of a write's text (claimText) that no prompt of the session holds. */
export function unattestedFound(text: string, record: Pick<PromptRecord, 'has'>): StatedValue[] {
  return statedValues(text).filter((v) => !v.keys.some((k) => record.has(k)))
}

/** The same, as the text writes them. */
export function unattestedValues(text: string, record: Pick<PromptRecord, 'has'>): string[] {
  return unattestedFound(text, record).map((v) => v.text)
}

/** The taint reason of a direct_chat write stating values no prompt holds (frontmatter, review, recheck). */
export const UNATTESTED_PREFIX = 'origin: direct_chat, but the user typed none of '

export function unattestedReason(values: string[]): string {
  const shown = values.slice(0, 4).map((v) => `"${v}"`).join(', ')
  return `${UNATTESTED_PREFIX}${shown}${values.length > 4 ? ` (+${values.length - 4} more)` : ''} in this session`
}
