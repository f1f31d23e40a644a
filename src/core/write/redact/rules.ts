/**
 * The built-in secret patterns. Each rule names one kind; several rules may share a kind.
 *
 * Conventions every pattern here follows, because `redact()` relies on them:
 * - global and `d` (indices) flags; when a named group `secret`, `secret2` or `secret3`
 *   takes part in a match, only that span is replaced, so `password: "x"` keeps its name.
 * - no unbounded quantifier that can backtrack over the same characters twice: runs are
 *   bounded (`{0,512}`) or unambiguous, so a 256 KiB adversarial input stays linear-ish.
 * - the order matters: whole blocks (private keys) first, then provider tokens with a
 *   recognisable shape, then URLs, then the generic `name = value` assignments, whose
 *   values must not be a redaction marker or an earlier rule's match.
 */

export interface MatchContext {
  text: string
  /** start and end of the span that would be replaced */
  start: number
  end: number
  match: RegExpExecArray
}

export interface RedactionRule {
  kind: string
  pattern: RegExp
  /** Return false to leave this match untouched (a known false positive). */
  validate?: (secret: string, ctx: MatchContext) => boolean
  /**
   * False only for a text the pattern cannot match (it lacks a literal, or a run, that every
   * match holds): the rule then skips the text without a scan. It changes no result; the
   * rules whose scans cost most on prose have one.
   */
  mayMatch?: (text: string) => boolean
}

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  if (s.length === 0) return 0
  const counts = new Map<string, number>()
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1)
  let h = 0
  for (const n of counts.values()) {
    const p = n / s.length
    h -= p * Math.log2(p)
  }
  return h
}

/** A `mayMatch`: the text holds one of these literals (for a pattern without `i`, or literals without letters). */
const holdsOne =
  (...literals: string[]) =>
  (text: string): boolean =>
    literals.some((l) => text.includes(l))

const RUN_CHARS = new Uint8Array(128)
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-') RUN_CHARS[c.charCodeAt(0)] = 1

/**
 * Whether `text` holds `min` (at least 1) characters of [A-Za-z0-9+/_-] in a row, the run that
 * base64 and random strings are made of. Only every `min`-th character is probed: any run that
 * long holds a probed one, and the run through a probed one is measured both ways.
 */
export function hasRun(text: string, min: number): boolean {
  const n = text.length
  const runChar = (i: number) => {
    const c = text.charCodeAt(i)
    return c < 128 && RUN_CHARS[c] === 1
  }
  for (let i = min - 1; i < n; i += min) {
    if (!runChar(i)) continue
    let lo = i
    while (lo > 0 && runChar(lo - 1)) lo--
    let hi = i
    while (hi + 1 < n && hi - lo + 1 < min && runChar(hi + 1)) hi++
    if (hi - lo + 1 >= min) return true
  }
  return false
}

// Documentation keys (AKIAIOSFODNN7EXAMPLE, …EXAMPLEKEY) are published on purpose.
const notExample = (s: string) => !s.includes('EXAMPLE')
const hasDigit = (s: string) => /\d/.test(s)
const mixedCase = (s: string) => /[a-z]/.test(s) && /[A-Z]/.test(s)

function jwtHeaderOk(token: string): boolean {
  const head = Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString('utf8')
  // cheap shape check first: a failed JSON.parse throws, and throwing per match is slow
  if (!/^\{\s*"[^"]{1,32}"\s*:/.test(head) || !/\}\s*$/.test(head)) return false
  try {
    const json = JSON.parse(head)
    return json !== null && typeof json === 'object' && ('alg' in json || 'typ' in json || 'enc' in json)
  } catch {
    return false
  }
}

// Values that say "a value goes here" rather than being one.
const PLACEHOLDER =
  /^(?:true|false|null|nil|none|undefined|yes|no|on|off|empty|required|optional|string|str|bool|boolean|int|integer|number|any|unknown|text|redacted|hidden|masked|x{3,}|\*+|\.+|-+|_+|•+)$/i
const REFERENCE =
  /^(?:\$\{?[A-Za-z_]|%\(?[A-Za-z_]|\{\{|<[^>]*>$|process\.env|os\.(?:environ|getenv)|env\(|getenv\(|secrets\.|vault:|!vault|\$\()/

/**
 * Shared sanity check for `name = value` assignments: skips placeholders, references to
 * environment variables or code, short numbers, and prose like "password: use the vault".
 */
function assignmentValueOk(value: string, ctx: MatchContext): boolean {
  if (PLACEHOLDER.test(value) || REFERENCE.test(value) || !notExample(value)) return false
  if (/^\d{1,5}$/.test(value)) return false
  const groups = ctx.match.groups ?? {}
  const bare = groups.secret3 !== undefined
  if (bare) {
    // `${API_KEY}` / `{{ token }}`: the bare value stops at the brace, so look past it
    if (REFERENCE.test(ctx.text.slice(ctx.start, ctx.end + 2))) return false
    const next = ctx.text.charAt(ctx.end)
    // `password = getPassword()` or `token: req.headers.token` are code, not values
    if (next === '(') return false
    if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(value)) return false
    // prose ("password: reset it at the portal") or code ("token = await getToken()"): a
    // lowercase word followed by more words, after `:` or after a spaced `=`
    const spaced = /[ \t]$/.test(ctx.text.slice(ctx.start - 1, ctx.start))
    if (
      (groups.op === ':' || spaced) &&
      /^[a-z]+$/.test(value) &&
      /^[ \t]+[A-Za-z_$(]/.test(ctx.text.slice(ctx.end, ctx.end + 3))
    ) {
      return false
    }
  }
  return true
}

const HASH_LIKE = /^(?:[0-9a-f]{40}|[0-9a-f]{64}|[0-9a-f]{128}|[0-9A-F]{40}|[0-9A-F]{64})$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

function highEntropyOk(value: string, ctx: MatchContext): boolean {
  if (!assignmentValueOk(value, ctx)) return false
  if (value.length < 20 || value.length > 512) return false
  if (HASH_LIKE.test(value) || UUID.test(value)) return false
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value) || /^[~./]/.test(value) || /\s/.test(value)) return false
  if (!hasDigit(value) || !/[A-Za-z]/.test(value)) return false
  return entropy(value) >= 3.5
}

// Name suffixes that describe a setting about the secret, not the secret itself
// (`password_min_length: 12`, `token_type: bearer`, `secretName: db-creds`).
const META_SUFFIX =
  /^[_.-]?(?:s|count|len|length|min|max|limit|policy|hint|field|label|prompt|reset|required|url|uri|path|file|dir|env|var|name|type|expiry|expires|expiration|ttl|endpoint|header|prefix|pattern|regex|rule|rules|strength|ize|izer|ized|ary|aries|less|_?min_?length|_?max_?length)$/i

const VALUE =
  String.raw`(?!\[REDACTED:)(?:"(?<secret>[^"\r\n]{1,512})"|'(?<secret2>[^'\r\n]{1,512})'|(?<secret3>(?![=>])[^\s"'\x60,;<>(){}\[\]]{1,512}))`

/** `NAME<suffix> [:=] value` where NAME is matched case-insensitively. */
function assignment(kind: string, name: string, validate = assignmentValueOk): RedactionRule {
  const pattern = new RegExp(
    String.raw`(?:${name})(?<suffix>[A-Za-z0-9_.\-]{0,32})["']?[ \t]{0,8}(?<op>:=|=>|[:=])[ \t]{0,8}` + VALUE,
    'gdi',
  )
  return {
    kind,
    pattern,
    validate: (value, ctx) => !META_SUFFIX.test(ctx.match.groups?.suffix ?? '') && validate(value, ctx),
  }
}

/**
 * The boundary before a token: no letter or digit, unless that letter or digit ends a
 * backslash escape (`\n`, `\t`, `\u0022`, `\x41`) of a JSON or code string, as in
 * `"line\nghp_…"`. One negative lookbehind (an alternation here made every rule several
 * times slower); redact/index.ts also finds the token rules by it.
 */
export const TOKEN_OPEN = String.raw`(?<![A-Za-z0-9](?<!\\[nrtfbv])(?<!\\u[0-9A-Fa-f]{4})(?<!\\x[0-9A-Fa-f]{2}))`
const boundary = (chars: string) => TOKEN_OPEN.replace('[A-Za-z0-9]', `[${chars}]`)

/**
 * A token with a fixed, recognisable shape, with boundaries on both sides. An underscore
 * is no boundary: `MY_GITHUB_ghp_…` is a token glued to a name. A letter is one (`risk_live_…`
 * is a word); a token glued to letters is left to the bare-string rule at the end.
 */
const token = (kind: string, body: string, flags = 'gd', validate?: RedactionRule['validate']): RedactionRule => ({
  kind,
  pattern: new RegExp(String.raw`${TOKEN_OPEN}(?:${body})(?![A-Za-z0-9])`, flags),
  validate,
})

// PEM body: anything but a run of five dashes, so a BEGIN without its END fails fast.
const PEM_BODY = String.raw`(?:[^-]|-(?!----)){0,32768}?`
const DB_SCHEMES =
  'postgres(?:ql)?|mysql|mariadb|mongodb(?:\\+srv)?|rediss?|amqps?|mssql|sqlserver|clickhouse|cockroachdb|couchdb|neo4j(?:\\+s)?|nats|kafka|ldaps?|smtps?|jdbc:[a-z]+'

// ---- secrets in prose -------------------------------------------------------------
// Names of a secret in English, German, French, Spanish, Italian and Portuguese. A name is
// followed by an optional qualifier ("for the office wifi", "du wifi", "für das WLAN"),
// a verb or a colon, then the value.
const ASSIGNED_NAMES = String.raw`pass(?:word|wd)|pwd`
const PASSWORD_NAMES = String.raw`passcode|wi-?fi[ \t-]?(?:key|code)|network[ \t]key|wpa[ \t-]?key|secret[ \t](?:code|word)|access[ \t]code|security[ \t]code|unlock[ \t]code|(?:wlan-?)?(?:passwort|kennwort|schlüssel)|zugangs(?:code|daten)|sicherheitscode|mot[ \t]de[ \t]passe|mdp|code[ \t](?:d'accès|secret)|clé[ \t](?:wi-?fi|wpa)|contrase(?:ñ|n)a|clave(?:[ \t]de[ \t]acceso)?|código[ \t]de[ \t]acceso|parola[ \t]d'ordine|senha|palavra-passe`
const PASSPHRASE_NAMES = String.raw`pass[ \t-]?phrase|passphrase|phrase[ \t]secrète|frase[ \t](?:de[ \t]contraseña|secreta)|mnemonic|seed[ \t]phrase|recovery[ \t]phrase|wiederherstellungsphrase`
const PIN_NAMES = String.raw`pin(?:[ \t-]?(?:code|number|nummer))?|code[ \t]pin|código[ \t]pin|geheimzahl|(?:door|alarm|gate|garage|safe|lock)[ \t]code|türcode|code[ \t]de[ \t]la[ \t]porte`
// letters and digits, Latin-1 and Latin Extended-A/B included (ä, é, ñ, ß, …)
const LETTER = String.raw`A-Za-z0-9\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f`
const QUALIFIER = String.raw`(?:[ \t]+(?:for|of|to|on|at|du|de|des|pour|del|para|für|fürs|vom|von|zum|zur|der|dell[ao]|do|da)(?:[ \t]+[^\s.,;:!?="'=]{1,30}){1,4}?)?`
const SAYS = String.raw`(?:is|was|will[ \t]be|is[ \t]now|has[ \t]been[ \t](?:changed|set)[ \t]to|(?:is[ \t])?set[ \t]to|reads|ist|lautet|war|heißt|est|était|sera|es|era|será|è|é)(?![${LETTER}])(?:[ \t]*:)?`
// `name: value` is the assignment rules' job where they know the name; prose takes the rest
const VERB = String.raw`(?:${SAYS}|:)`
const WORD_VALUE = String.raw`(?<secret>(?!\[REDACTED:)[^\s"'“”«»‘’]{0,127}[^\s"'“”«»‘’.,;:!?)\]])`
// a passphrase is several words: the rest of the sentence, up to 12 words
const PHRASE_VALUE = String.raw`(?<secret>(?!\[REDACTED:)[^\s"'“”«»‘’]{0,63}[^\s"'“”«»‘’.,;:!?)\]](?:[ \t]+[^\s"'“”«»‘’.,;:!?]{1,63}){0,11})`

function prose(names: string, value: string, verb = VERB): RegExp {
  return new RegExp(
    String.raw`(?<![${LETTER}_])(?:${names})(?![${LETTER}])${QUALIFIER}[ \t]{0,4}${verb}[ \t]{0,4}["'“”«»‘’]?[ \t]{0,2}${value}`,
    // no `u` flag: case-insensitive Unicode matching is several times slower, and the
    // names and letters are all in the Basic Multilingual Plane
    'gdi',
  )
}

// Words that follow "the password is" in sentences that hold no password.
const PROSE_STOP = new Set(
  (
    'the a an not no never always also still now just only too very being been set reset required needed missing empty blank wrong incorrect ' +
    'invalid expired case same different unknown private hidden there here in on at for of to from with without by within inside ' +
    'stored saved kept managed shared rotated changed available known long short weak strong hard easy good bad fine ok okay what which that this ' +
    'it your my our their his her its whatever something anything nothing printed written given sent use see ask check get read find enter type ' +
    'generated random unique sensitive because so and or but if when then than as like below above following listed attached mandatory optional ' +
    'encrypted hashed salted one two protected enforced disabled enabled none null several many more less most unless until while where who whom whose often sometimes must should can could will would may might shall made shown done part each every all both either neither another other such ' +
    // de
    'nicht kein keine falsch richtig geheim erforderlich leer abgelaufen im der die das ein eine einem einen noch jetzt nur auch zu sehr gespeichert geändert ungültig ' +
    // fr
    'pas trop le la les un une dans incorrect requis obligatoire vide expiré stocké changé toujours encore aussi très ' +
    // es, it, pt
    'el los las una en incorrecta incorrecto obligatoria obligatorio requerida vacía secreta muy también demasiado guardada cambiada ' +
    'non il lo è obbligatoria não uma em obrigatória'
  ).split(' '),
)

const PROSE_JUDGEMENT = new Set('correct valid right wrong incorrect invalid fine ok okay good bad weak strong long short hard easy secret richtig falsch gültig valide correcta válida'.split(' '))

/** The value after "password is" unless it is a word of ordinary prose or a placeholder. */
function proseValueOk(value: string, ctx: MatchContext): boolean {
  const first = value.split(/[ \t]/)[0]
  if (PLACEHOLDER.test(first) || REFERENCE.test(first) || !notExample(first)) return false
  // code, not a value: `password = getPassword()`, `<your password>`, `${PASS}`
  if (/^[<{$%(]/.test(first) || ctx.text.charAt(ctx.end) === '(') return false
  const lower = first.toLowerCase()
  if (/^[\p{L}'-]+$/u.test(first)) {
    if (PROSE_STOP.has(lower)) return false
    // "the password is correct" judges a password; "passphrase: correct horse battery staple" is one
    if (PROSE_JUDGEMENT.has(lower) && !/[ \t]/.test(value)) return false
    // "the password is rotated / expiring / usually …": a participle or an adverb
    if (/^[a-z]+$/.test(first) && /(?:ed|ing|ly)$/.test(first)) return false
  }
  if (first.length < 3 && !/\d/.test(first)) return false
  return true
}

// ---- bare random strings ----------------------------------------------------------
/**
 * The letter pairs that make 95 % of the pairs in the words of English technical prose (the
 * README files of this project's dependencies, camel case split into words): 243 of the 676,
 * and 17 more that words of mail and notes need.
 * A run of random letters has about a third of its pairs among them, a word nearly all.
 */
const COMMON_PAIRS = new Set(
  ('ab ac ad ag ai al am an ap ar as at au av aw ay az ba be bi bj bl bo br bu by ca ce ch ci ck cl co cr cs ct cu ' +
    'da dd de di dk dl do dr ds du ea eb ec ed ee ef eg el em en ep eq er es et ev ew ex ey fa fe ff fi fo fr ft fu ' +
    'ge gh gi gl gn gu ha he hi ho hr ht hu hy ia ib ic id ie if ig il im in io ip ir is it iv ix ja je js ka ke ki ' +
    'la ld le li ll lo ls lt lu ly ma mb me mi mm mo mp na nc nd ne nf ng ni nl nn no np ns nt nu ny ob oc od of og ' +
    'ol om on oo op or os ot ou ov ow pa pd pe pi pl pm po pp pr ps pt pu qu ra rc rd re rf rg ri rk rl rm rn ro rr ' +
    'rs rt ru ry sa sc sd se sh si sm so sp ss st su sy ta tc te th ti to tp tr ts tt tu tw ty ub ud ue ug ui ul um ' +
    'un up ur us ut va ve vi wa we wh wi wn wo ws xa xp xt yn yo yp ' +
    // common in words the prose above had few of ("graph", "flags", "hooks", "invoice", "resize", "key")
    'af ei fl gr gs iz ks ky ms oi ok ph sk vo ys ze').split(' '),
)

/**
 * A run of letters that reads as a word: three in four of its letter pairs are common ones.
 * Counting every run of four or more letters as a word passed over 2 % of random
 * 40-character strings as identifiers; this passes over about one in ten thousand.
 */
function readsAsWord(run: string): boolean {
  const x = run.toLowerCase()
  let common = 0
  for (let i = 0; i + 1 < x.length; i++) if (COMMON_PAIRS.has(x.slice(i, i + 2))) common++
  return common >= 0.75 * (x.length - 1)
}

/**
 * A standalone 32–80 character string that looks random: upper and lower case letters and
 * digits, high entropy, and no run of word-like letters. Pure hex (git commit ids, sha256
 * digests engram itself prints) and UUIDs are left alone, which means a secret made only
 * of lowercase hex (an old 40-hex GitHub token) is not caught bare: README "Redaction"
 * says so. Paths (segments that are words) and identifiers (words joined by - or _) are
 * not random. Longer base64 (signatures, data: URIs, key records) is left alone too.
 */
function bareSecretOk(value: string, ctx: MatchContext): boolean {
  const v = value.replace(/=+$/, '')
  if (HASH_LIKE.test(v) || UUID.test(v) || /^[0-9a-fA-F]+$/.test(v) || !notExample(v) || DIGEST_PREFIX.test(v)) return false
  // a long part that is random itself is a secret, whatever words lead it (`deploy-key-<random>`,
  // `dckr_pat_<random>`, `api/<random>`: the words would count against the whole)
  const parts = v.split(/[/_\-+]/)
  if (!(parts.length > 1 && parts.some((p) => p.length >= 16 && looksRandom(p, 2, 3.5)))) {
    // one digit is enough: of random 40-character alphanumeric strings, 0.8 % hold fewer than two
    if (!looksRandom(v, 2, 4)) return false
    // words between separators make an identifier (two of them) or a path (one, that reads as a
    // word): a random part is rarely letters alone in the case of a word ("PRqU" is none)
    if (parts.length > 1) {
      const words = parts.filter((p) => WORD_CASE.test(p))
      if (words.length >= 2 || (v.includes('/') && words.some(readsAsWord))) return false
    }
  }
  // a line of a PEM block (a public key or certificate: private ones are redacted whole)
  const before = ctx.text.slice(Math.max(0, ctx.start - 65536), ctx.start)
  const begin = before.lastIndexOf('-----BEGIN ')
  if (begin >= 0 && !before.includes('-----END ', begin)) return false
  // a key record, signature or digest (`ed25519:<keyid>:<base64>`, "public_key": …, `SHA256:…`,
  // `integrity="sha384-…"`, go.sum's `h1:…`) — the names as words: "sig" inside "assignment"
  // (or a marker's `…-assignment]`) is none
  if (PUBLIC_BEFORE.test(ctx.text.slice(Math.max(0, ctx.start - 40), ctx.start))) return false
  return true
}

/** a word in a word's case: "deploy", "Deploy", "DeployKey", "API"; never "PRqU" (one way to read each, so no backtracking) */
const WORD_CASE = /^(?=[A-Za-z]{3})(?:[A-Z]?[a-z]+(?:[A-Z][a-z]+)*|[A-Z]+)$/
/** a digest named by its algorithm, glued to it by a dash (`sha384-…`, Subresource Integrity and npm's integrity) */
const DIGEST_PREFIX = /^(?:sha(?:1|224|256|384|512)|md5)-/i
const PUBLIC_BEFORE = /(?<![a-z])(?:public|pub|pubkey|ed25519|signatures?|sig|sha(?:1|224|256|384|512)|md5|h1|integrity|narhash|fingerprint|checksum|digest)(?![a-z])[^\n]{0,24}$/i

/**
 * Upper and lower case letters and digits (at least `least` letters of each case and a digit),
 * `bits` of entropy a character, and not mostly words: words ("Abstract", "Flow", "account")
 * cover much of an identifier, little of random text.
 */
function looksRandom(v: string, least: number, bits: number): boolean {
  let upper = 0
  let lower = 0
  let digit = 0
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i)
    if (c >= 65 && c <= 90) upper++
    else if (c >= 97 && c <= 122) lower++
    else if (c >= 48 && c <= 57) digit++
  }
  if (upper < least || lower < least || digit < 1) return false
  let wordy = 0
  for (const m of v.matchAll(/[A-Z]?[a-z]{3,}/g)) if (readsAsWord(m[0])) wordy += m[0].length
  if (wordy / v.length >= 0.35) return false
  return entropy(v) >= bits
}

// Prefixes that end no word of any language we know, so that even glued to letters they
// start a token (see the rule before the bare-string one).
// Each with the prefixes it starts with: a pattern that opens with a lookbehind is tried at
// every position, so a text without the prefix is not scanned.
const GLUED_TOKENS: [string, string, string[]][] = [
  ['github-token', 'ghp_[A-Za-z0-9]{36,255}', ['ghp_']],
  ['github-oauth-token', 'gho_[A-Za-z0-9]{36,255}', ['gho_']],
  ['github-app-token', 'gh[su]_[A-Za-z0-9]{36,255}', ['ghs_', 'ghu_']],
  ['github-refresh-token', 'ghr_[A-Za-z0-9]{36,255}', ['ghr_']],
  ['github-fine-grained-token', 'github_pat_[A-Za-z0-9]{20,30}_[A-Za-z0-9]{50,70}', ['github_pat_']],
  ['gitlab-token', '(?:glpat|gldt|glrt|glptt|glft|glsoat|glcbt|glimt|gloas)-[0-9A-Za-z_\\-]{20,64}', ['glpat-', 'gldt-', 'glrt-', 'glptt-', 'glft-', 'glsoat-', 'glcbt-', 'glimt-', 'gloas-']],
  ['npm-token', 'npm_[A-Za-z0-9]{36}', ['npm_']],
  ['anthropic-api-key', 'sk-ant-(?:api|admin|oat|ort|sid)\\d{2}-[A-Za-z0-9_\\-]{32,200}', ['sk-ant-']],
]

/**
 * A truncated key block (no END line): the BEGIN line, and the lines after it that read as the
 * block's, indented or not — a line that starts with 16 base64 characters, a digit, `+`, `/` or
 * `=` among those it starts with (and what follows on it: more base64, spaces, commas, colons,
 * dashes; `ConfigurationManager, reloaded` is prose), a short last line of base64 alone with a digit,
 * `+`, `/`, `=` or a capital after its first letter (`=AbCd`, `Aw==`; not `ok` or `Thanks`), or
 * one of the headers a PEM or PGP block carries (`Proc-Type: 4,ENCRYPTED`, `DEK-Info: …`,
 * `Version: …`). Any other line (prose, `next: value`) ends the block: it is the writer's own
 * text, kept. `unit` is a base64 character, `rest` what may follow on a body line.
 */
const KEY_BEGIN = String.raw`-----BEGIN (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----`
const truncatedKey = (unit: string, rest: string, begin = KEY_BEGIN): RegExp =>
  new RegExp(
    String.raw`${begin}(?:(?:\r?\n|\r){1,2}[ \t]{0,256}(?:(?=${unit}{0,1024}(?:[0-9+/=]|\[REDACTED:))${unit}{16}${rest}{0,8192}|(?=[A-Za-z0-9+/=]{0,14}[0-9+/=]|[A-Za-z0-9+/=]{1,14}[A-Z])${unit}{1,15}(?=[ \t]{0,256}(?:[\r\n"'\x60]|$))|(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset|MessageID): [^\r\n]{1,256})){0,512}`,
    'dg',
  )
const TRUNCATED_KEY: RedactionRule = {kind: 'private-key', pattern: truncatedKey('[A-Za-z0-9+/=]', '[A-Za-z0-9+/=:, \t-]')}

export const BUILTIN_RULES: RedactionRule[] = [
  // --- private key blocks (first: their bodies contain things later rules would nibble)
  {
    kind: 'gcp-service-account-key',
    pattern: /"private_key"\s{0,8}:\s{0,8}"(?<secret>-----BEGIN[^"]{0,16384})"/dg,
  },
  {kind: 'gcp-service-account-key', pattern: /"private_key_id"\s{0,8}:\s{0,8}"(?<secret>[0-9a-f]{40})"/dg},
  {
    kind: 'pgp-private-key',
    pattern: new RegExp(String.raw`-----BEGIN PGP PRIVATE KEY BLOCK-----${PEM_BODY}-----END PGP PRIVATE KEY BLOCK-----`, 'gd'),
  },
  {
    kind: 'private-key',
    pattern: new RegExp(
      String.raw`-----BEGIN (?<label>(?:[A-Z0-9]{1,12} ){0,3})PRIVATE KEY-----${PEM_BODY}-----END \k<label>PRIVATE KEY-----`,
      'gd',
    ),
  },
  // a truncated block (no END line): the header and the base64 lines that follow it
  TRUNCATED_KEY,
  {kind: 'age-secret-key', pattern: /AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}/dg},

  // --- cloud providers
  token('aws-access-key-id', '(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}', 'gd', notExample),
  {
    kind: 'aws-secret-access-key',
    pattern:
      /(?:aws[_\-. ]?secret[_\-. ]?(?:access[_\-. ]?)?key|secret[_\-. ]?access[_\-. ]?key)["']?[ \t]{0,8}[:=][ \t]{0,8}["']?(?<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/dgi,
    validate: notExample,
  },
  {
    kind: 'aws-session-token',
    pattern: /aws[_\-. ]?session[_\-. ]?token["']?[ \t]{0,8}[:=][ \t]{0,8}["']?(?<secret>[A-Za-z0-9/+=]{100,2048})/dgi,
  },
  token('gcp-api-key', 'AIza[0-9A-Za-z_\\-]{35}'),
  token('google-oauth-client-secret', 'GOCSPX-[A-Za-z0-9_\\-]{28}'),
  token('google-oauth-token', 'ya29\\.[0-9A-Za-z_\\-]{30,2048}'),
  {kind: 'azure-storage-key', pattern: /AccountKey=(?<secret>[A-Za-z0-9+/]{86}==)/dg},
  {kind: 'azure-connection-string', pattern: /SharedAccessKey=(?<secret>[A-Za-z0-9+/]{42,86}={0,2})/dg},
  {kind: 'azure-sas-token', pattern: /[?&]sig=(?<secret>[A-Za-z0-9%+/]{40,128}(?:%3D|=){0,2})/dg},
  token('digitalocean-token', 'do[opr]_v1_[a-f0-9]{64}'),
  token('databricks-token', 'dapi[a-f0-9]{32}(?:-\\d)?'),

  // --- source hosting
  token('github-token', 'ghp_[A-Za-z0-9]{36,255}'),
  token('github-fine-grained-token', 'github_pat_[A-Za-z0-9]{20,30}_[A-Za-z0-9]{50,70}'),
  token('github-oauth-token', 'gho_[A-Za-z0-9]{36,255}'),
  token('github-app-token', 'gh[su]_[A-Za-z0-9]{36,255}'),
  token('github-refresh-token', 'ghr_[A-Za-z0-9]{36,255}'),
  token('gitlab-token', '(?:glpat|gldt|glrt|glptt|glft|glsoat|glcbt|glimt|gloas)-[0-9A-Za-z_\\-]{20,64}(?:\\.[0-9a-z]{2}\\.[0-9a-z]{7,9})?'),

  // --- chat and SaaS
  token('slack-token', '(?:xox[abprs]|xoxe(?:\\.xox[bp])?)-[0-9A-Za-z\\-]{10,250}', 'gd', hasDigit),
  {kind: 'slack-webhook', pattern: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/(?<secret>[A-Za-z0-9_/]{20,200})/dg},
  {
    kind: 'discord-webhook',
    pattern: /https:\/\/(?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/webhooks\/\d{15,20}\/(?<secret>[A-Za-z0-9_\-]{60,72})/dg,
  },
  token('telegram-bot-token', '\\d{8,10}:AA[0-9A-Za-z_\\-]{33}'),
  token('stripe-secret-key', 'sk_(?:live|test)_[0-9A-Za-z]{16,247}'),
  token('stripe-restricted-key', 'rk_(?:live|test)_[0-9A-Za-z]{16,247}'),
  token('stripe-webhook-secret', 'whsec_[A-Za-z0-9]{32,64}'),
  token('twilio-api-key', 'SK[0-9a-fA-F]{32}'),
  {
    kind: 'twilio-auth-token',
    pattern: /twilio[_\-. ]?auth[_\-. ]?token["']?[ \t]{0,8}[:=][ \t]{0,8}["']?(?<secret>[0-9a-f]{32})(?![0-9a-f])/dgi,
  },
  token('sendgrid-api-key', 'SG\\.[A-Za-z0-9_\\-]{22}\\.[A-Za-z0-9_\\-]{43}'),
  token('mailgun-api-key', 'key-[0-9a-f]{32}'),
  // opens with a class, not a literal: a text without "-us" is not scanned
  {...token('mailchimp-api-key', '[0-9a-f]{32}-us\\d{1,2}'), mayMatch: holdsOne('-us')},
  token('shopify-token', 'shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}'),
  token('square-token', 'sq0(?:atp|csp)-[0-9A-Za-z_\\-]{22,43}'),
  token('linear-api-key', 'lin_api_[A-Za-z0-9]{40}'),
  token('npm-token', 'npm_[A-Za-z0-9]{36}'),
  token('pypi-token', 'pypi-AgE[A-Za-z0-9_\\-]{50,512}'),
  // services whose tokens the bare-string rule cannot take: lowercase hex, upper case only, over
  // 80 characters, or in parts joined by dots (an attacker's read of round twenty-five listed them)
  token('supabase-token', 'sbp_[a-f0-9]{40}'),
  token('perplexity-api-key', 'pplx-[A-Za-z0-9]{48}'),
  token('langsmith-api-key', 'lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}'),
  token('pulumi-token', 'pul-[a-f0-9]{40}'),
  token('sentry-token', 'sntryu_[a-f0-9]{64}|sntrys_[A-Za-z0-9+/=_\\-]{60,400}'),
  token('shippo-token', 'shippo_(?:live|test)_[a-f0-9]{40}'),
  token('newrelic-api-key', 'NRAK-[A-Z0-9]{27}'),
  token('xai-api-key', 'xai-[A-Za-z0-9]{80}'),
  token('vault-token', 'hv[sbr]\\.[A-Za-z0-9_\\-]{24,200}', 'gd', hasDigit),
  token('atlassian-api-token', 'ATATT3[A-Za-z0-9_\\-=]{150,250}'),
  token('airtable-token', 'pat[A-Za-z0-9]{14}\\.[a-f0-9]{64}'),
  token('mapbox-secret-token', 'sk\\.eyJ[A-Za-z0-9_\\-]{20,400}\\.[A-Za-z0-9_\\-]{20,200}'),
  token('discord-bot-token', '[MNO][A-Za-z0-9_\\-]{23,27}\\.[A-Za-z0-9_\\-]{6}\\.[A-Za-z0-9_\\-]{27,40}', 'gd', (v) => hasDigit(v) && mixedCase(v)),

  // --- model providers (Anthropic before OpenAI: both start with `sk-`)
  token('anthropic-api-key', 'sk-ant-(?:api|admin|oat|ort|sid)\\d{2}-[A-Za-z0-9_\\-]{32,200}'),
  token(
    'openai-api-key',
    'sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\\-]{20,300}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|sk-[A-Za-z0-9]{32,64}',
    'gd',
    hasDigit,
  ),
  token('huggingface-token', 'hf_[A-Za-z0-9]{30,40}', 'gd', mixedCase),

  // --- bearer credentials
  {
    kind: 'jwt',
    // lookahead + backreference make each segment atomic, so a long run without dots fails fast
    pattern: new RegExp(
      String.raw`${boundary(String.raw`A-Za-z0-9_\-`)}eyJ(?=(?<h>[A-Za-z0-9_\-]{5,8000}))\k<h>\.(?=(?<p>[A-Za-z0-9_\-]{2,16000}))\k<p>\.[A-Za-z0-9_\-]{10,2000}`,
      'dg',
    ),
    validate: jwtHeaderOk,
  },
  {kind: 'bearer-token', pattern: /\bBearer[ \t]{1,4}(?<secret>[A-Za-z0-9\-._~+/]{16,2048}=*)/dg, validate: hasDigit},
  {kind: 'basic-auth', pattern: /\bAuthorization[ \t]{0,4}:[ \t]{0,4}Basic[ \t]{1,4}(?<secret>[A-Za-z0-9+/]{8,1024}={0,2})/dgi},

  // --- URLs and connection strings with a password
  {
    kind: 'connection-string-password',
    pattern: new RegExp(
      String.raw`\b(?:${DB_SCHEMES})(?:\+[a-z0-9]+)?:\/\/[^\s:@/?#]{0,128}:(?<secret>(?!\[REDACTED:)[^\s@/?#]{1,256})@`,
      'dgi',
    ),
    validate: (v) => !PLACEHOLDER.test(v) && !REFERENCE.test(v),
    mayMatch: (text) => text.includes('://') && text.includes('@'),
  },
  {
    kind: 'url-password',
    pattern: /\b[a-z][a-z0-9+.\-]{1,30}:\/\/[^\s:@/?#[\]]{0,128}:(?<secret>(?!\[REDACTED:)[^\s@/?#]{1,256})@/dgi,
    validate: (v) => !PLACEHOLDER.test(v) && !REFERENCE.test(v),
    mayMatch: (text) => text.includes('://') && text.includes('@'),
  },
  {
    kind: 'netrc-password',
    // the machine must look like a host, so prose ("machine learning login page…") stays
    pattern: /\bmachine[ \t]+(?:[^\s.]{1,128}\.\S{1,128}|localhost|default)[ \t]+login[ \t]+\S{1,256}[ \t]+password[ \t]+(?<secret>(?!\[REDACTED:)\S{1,256})/dg,
  },

  // --- generic assignments (last: everything specific has had its turn)
  assignment('password-assignment', '(?:pass(?:word|wd|phrase)|pwd|(?<![A-Za-z])pass)'),
  assignment('secret-assignment', 'secret'),
  assignment('token-assignment', 'token'),
  assignment('api-key-assignment', 'api[_\\-. ]?key'),
  assignment('high-entropy-assignment', '(?<!public[_\\-.]?)(?:key|auth|cred(?:ential)?s?|private|salt|seed|cookie|hmac)', highEntropyOk),

  // --- secrets in prose ("the wifi password is …", "das Passwort lautet …", "PIN: 1234")
  {kind: 'password-in-prose', pattern: prose(PASSPHRASE_NAMES, PHRASE_VALUE), validate: proseValueOk},
  {kind: 'password-in-prose', pattern: prose(PASSWORD_NAMES, WORD_VALUE), validate: proseValueOk},
  {kind: 'password-in-prose', pattern: prose(ASSIGNED_NAMES, WORD_VALUE, SAYS), validate: proseValueOk},
  {kind: 'pin-code', pattern: prose(PIN_NAMES, String.raw`(?<secret>\d{4,12})(?![\d.,]\d)(?!\d)`)},

  // --- a token with an unmistakable prefix glued to letters (`xghp_…`, `tokenglpat-…`):
  // token() treats a letter before it as a word, so these prefixes, which end no word, get
  // their own rule; the random part must hold a digit and a letter, as every real one does
  ...GLUED_TOKENS.map(([kind, body, prefixes]) => ({
    kind,
    pattern: new RegExp(String.raw`(?<=[A-Za-z0-9])(?:${body})(?![A-Za-z0-9])`, 'gd'),
    validate: (value: string) => /\d/.test(value) && /[A-Za-z]/.test(value.slice(4)),
    mayMatch: holdsOne(...prefixes),
  })),

  // --- last: a bare random-looking string that no rule above named
  {
    kind: 'high-entropy-string',
    pattern: new RegExp(String.raw`${boundary(String.raw`A-Za-z0-9+/=_\-.`)}(?<secret>[A-Za-z0-9+/_\-]{32,80}={0,2})(?![A-Za-z0-9+/=_\-])`, 'dg'),
    validate: bareSecretOk,
    // most text has no run of 32 such characters, and the pattern's lookbehind is tried at every position
    mayMatch: (text) => hasRun(text, 32),
  },
]

/**
 * The rules as the look-alike reading runs them (redact/index.ts): the same, but for a truncated
 * key block, which may start at the plain reading's marker of one, and whose lines there may be
 * markers of the plain reading (a key whose BEGIN line is
 * fullwidth: the plain reading redacted the random-looking lines one by one), each still a line of
 * the block. Only there: in the plain reading a marker in a block stops the block before it.
 */
const MARKER_UNIT = String.raw`\[REDACTED:[a-z0-9-]{1,64}\]`
export const LOOKALIKE_RULES: RedactionRule[] = BUILTIN_RULES.map((r) =>
  r === TRUNCATED_KEY
    ? {
        kind: r.kind,
        pattern: truncatedKey(
          `(?:[A-Za-z0-9+/=]|${MARKER_UNIT})`,
          `(?:[A-Za-z0-9+/=:, \t-]|${MARKER_UNIT})`,
          // or where the plain reading left a truncated key's marker: its body may start with a
          // line only this reading reads as the block's (`MIIEowIBＡAKCAQEA…`)
          String.raw`(?:${KEY_BEGIN}|\[REDACTED:private-key\])`,
        ),
      }
    : r,
)
