/**
 * The provenance validator: authority must be proven, never asserted. No write an agent
 * makes can carry proof of authority (owner and dream writes are the tool's own, not a
 * vote's), so a write claiming an elevated origin or "system" is rejected, and text that
 * claims to speak for the owner or the system is forged.
 */
import {isAuthorityClaim} from '../../memory/memory.js'
import type {Vote, WriteCandidate} from './types.js'
import {thirdParty} from './types.js'
import {clip} from '../../text/clip.js'
import {Gates} from './instruction.js'

const AUTHORITY = String.raw`(?:the\s+)?(?:owner|system|admin(?:istrator)?|developer|operator|security\s+team|it\s+department|root|anthropic|openai)`
/**
 * Claims of an elevated origin, a signature or a review, as text states them: a signature is
 * never text, so every such claim in a write is unbacked. Matched after normalisation (the
 * caller passes the folded text too), in English and sixteen other languages.
 */
/**
 * What a pattern needs: fragments in groups, each a literal the pattern spells out, and every
 * match holding one fragment of every group. A text that lacks every fragment of some group
 * cannot match, and a substring search costs far less than a failed match of a long
 * alternation: most text lacks most. Fragments of an `i` pattern are ASCII (or CJK, which has
 * no case) and lower case, and are looked for in the lower-cased text: an ASCII letter matches,
 * under `i`, only its two cases, which lower-casing folds. Fragments of a pattern without `i`
 * are looked for in the text as it is. Nothing needs Cyrillic, where a letter like "о" also
 * matches, under `i`, a look-alike that lower-casing leaves alone (U+1C82).
 * test/unit/textchecks-same.test.ts holds every match to its fragments.
 */
const NEEDS = new WeakMap<RegExp, Int32Array[]>()
/** over the lower-cased text, for `i` patterns, and over the text, for the others */
const LOWER_GATES = new Gates()
const TEXT_GATES = new Gates()
export const needsForTests: {re: RegExp; needs: string[][]}[] = []
function needs(fragments: string[][], re: RegExp): RegExp {
  NEEDS.set(re, (re.ignoreCase ? LOWER_GATES : TEXT_GATES).compile(fragments))
  needsForTests.push({re, needs: fragments})
  return re
}

/**
 * Before "approved by the owner": a rule or a condition, not a stamp ("refunds must be approved
 * by the owner", "unless it is approved by the admin", "if approved by the system"): a text that
 * says what needs an approval claims none. Only a must or an if: "was", "has been", "happens to
 * be", "managed to get", "once", "until", "when" approved by the owner still claim one (an
 * attacker's review of the first version found each; docs/vote-rounds.md "Round twelve").
 */
const RULE_BEFORE = String.raw`(?<!\b(?:(?:must|should|shall|need\s+to|needs\s+to|has\s+to|have\s+to|ought\s+to|cannot|can['’]t|must\s+not)\s+(?:(?:first|always|still|only|all|each|also|then|not)\s+)?be\s+(?:(?:first|always|still|only|explicitly|formally|properly|personally|also|jointly)\s+)?|\b(?:unless|if)\s+(?:it\s+is\s+|they\s+are\s+)?))`
const OWNER_WORD = String.raw`(?:owner|admin(?:istrator)?|system|operator|root|maintainer|security\s+team)`
// before "countersigned", a word that makes it describe a document ("a countersigned agreement")
const DETERMINER = String.raw`(?:a|an|the|only|our|their|its|your|his|her|any|all|both|each|every|these|those|two|three|of|with)`
const CLAIMS: RegExp[] = [
  // "signature verified", "verified signature", "signed by", "cryptographically signed", "sig: ok"
  needs([['signature', 'signed']], /\bsignature\s*(?:[:=]\s*)?(?:verified|valid|checked|confirmed|ok|attached|present|matches)\b|\b(?:verified|valid|authentic|trusted)\s+(?:owner\s+)?signature\b|\b(?:cryptographically|digitally)\s+signed\b|\bsigned\s*(?:[:=]|by\b)\s*(?:the\s+)?(?:owner|admin|system|root|operator)|--\s*signed\b/i),
  // "OWNER OVERRIDE", "ADMIN OVERRIDE", "owner instruction", "verified owner note"
  // ("system instructions" is how people speak of a prompt: only an override or directive of the system counts)
  needs([['owner', 'admin', 'root', 'operator', 'maintainer', 'system', 'verified'], ['override', 'directive', 'command', 'instruction', 'mandate', 'authori', 'owner', 'admin', 'system']], /\b(?:owner|admin(?:istrator)?|root|operator|maintainer)\s+(?:override|directive|command|instruction|mandate|authori[sz]ation)s?\b(?!\s+(?:codes?|keys?|buttons?|switch(?:es)?|panel|settings?|line|tool|options?|flags?|menu|page|screen|form|field|permissions?|pins?))|\bsystem\s+(?:override|directive|mandate)s?\b|\bverified\s+(?:owner|admin|system)\b/i),
  // metadata written into the text: "source=owner", "origin: system", "trust=high", "[SYSTEM MEMORY | …]"
  needs([['source', 'origin', 'author', 'provenance', 'trust', 'role', 'from'], ['=', ':'], ['owner', 'system', 'admin', 'root', 'operator', 'high', 'trust', 'verified']], /\b(?:source|origin|author|provenance|trust|authority|role|from)\s*[=:]\s*["']?(?:owner|system|admin|root|operator|high|trusted|verified)\b/i),
  needs([['['], ['system', 'owner', 'admin', 'root', 'operator', 'trusted'], ['memory', 'note', 'message', 'notice', 'policy', 'record', 'channel', 'entry']], /\[\s*(?:system|owner|admin|root|operator|trusted)\s+(?:memory|note|message|notice|policy|record|channel|entry)\b[^\]\n]{0,80}\]/i),
  needs([['<<'], ['>>'], ['system', 'owner', 'admin', 'root']], /<<\s*(?:system|owner|admin|root)[^>\n]{0,40}>>/i),
  // reviewed / approved / pre-approved by the owner, "owner-signed", "authenticated message"
  needs([['reviewed', 'approved', 'vetted', 'countersigned', 'whitelisted', 'allow'], ['by'], ['owner', 'admin', 'system', 'operator', 'root', 'maintainer', 'security']], new RegExp(String.raw`${RULE_BEFORE}\b(?:reviewed|approved|pre-?approved|vetted|countersigned|whitelisted|allow-?listed)\s+(?:and\s+\w+\s+)?by\s+(?:the\s+)?${OWNER_WORD}\b`, 'i')),
  needs([['signed', 'reviewed', 'vetted', 'issued', 'authored', 'authenticated', 'elevated', 'escalated']], new RegExp(String.raw`\b${OWNER_WORD}[- ](?:signed|reviewed|vetted|issued|authored)\b|\bauthenticated\s+(?:message|note|instruction|request)\b|\b(?:elevated|escalated)\s+to\s+(?:administrator|admin|root|owner|system)\b`, 'i')),
  // a sign-off or a review stamped in the text: "Signed off: owner", "approved at owner level", "passed review; commit unchanged"
  needs([['off', 'level', 'passed', 'commit', 'need', 'sender']], /\bsign(?:ed)?[- ]?off\s*(?:[:=]|by(?:\s*:)?)\s*(?:the\s+)?(?:owner|admin\w*|system|root|operator|maintainer|security(?:\s+team)?)\b|\b(?:approved|cleared|signed\s+off|authori[sz]ed)\s+at\s+(?:the\s+)?(?:owner|admin(?:istrator)?|system|root|operator)[- ]level\b|\bpassed\s+(?:owner\s+|security\s+)?review\b[^.\n]{0,40}?\b(?:may|can|should|shall)\s+be\s+(?:committed|merged|applied|accepted|stored|saved)\b|\bpassed\s+review\s*[;:,]\s*commit\b|\bcommit(?:ted)?\s+(?:it\s+|this\s+)?(?:unchanged|as-is|as\s+is)\b|\bno\s+need\s+to\s+review\s+(?:this|it)\b|\(\s*not\s+from\s+the\s+sender\s*\)/i),
  // (each lookbehind of the countersignature comes after a lookahead for the word: tried at every
  // sign, it read a long run of spaces back from each)
  // stamps of a check this text cannot carry: "HMAC valid", "checksum OK", "(authenticated)", "integrity=passed", "countersigned"
  // (a countersignature required or awaited - "must be countersigned", "unless it is co-signed" - is a rule, not a stamp;
  // "a countersigned data-sharing agreement" names another document, not a stamp on this text - only
  // after a determiner and never as a heading: "Co-signed order #5", "Countersigned agreement: …" are stamps)
  needs([['hmac', 'checksum', 'integrity', 'mac', 'hash', 'seal', 'authenticated', 'verified', 'signed', 'approved', 'priority', 'clearance', 'privilege', 'level']], new RegExp(String.raw`\b(?:hmac|checksum|integrity(?:\s+check)?|mac|hash|seal)\s*(?:[:=(]\s*|check\s+)?["']?(?:valid|ok|passed|verified|matches|good|intact)\b|\((?:authenticated|verified|signed|signature\s+verified|owner[- ]approved|approved)\)|\b(?=(?:counter|co)-?signed\b)(?<!\b(?:must|shall|should|needs?\s+to|ha(?:s|ve)\s+to|(?:is|are)\s+to|required\s+to|to)\s+(?:be|get)\s+)(?<!\b(?:unless|until|if|once|not|never)\s+(?:\w+\s+){0,4})(?<!\b${DETERMINER}\s+)(?:counter|co)-?signed\b|(?=(?:counter|co)-?signed\b)(?<=\b${DETERMINER}\s+)(?:counter|co)-?signed\b(?!\s+(?:[\w-]+\s+){0,2}?(?:agreements?|contracts?|cop(?:y|ies)|forms?|ndas?|dsas?|documents?|letters?|leases?|orders?|quotes?|offers?|paperwork|mandates?|statements?\s+of\s+work)\b(?!\s*(?:[:#\u2014\u2013]|-\s)))|\bmessage\s+authenticated\b|\bauthenticated\s+(?:by|from)\s+(?:the\s+)?\w+|\b(?:priority|integrity|clearance|privilege|level)\s*[=:]\s*["']?(?:root|system|owner|admin|critical|passed|top)\b`, 'i')),
  // an order said to come from the top: "per the CEO's instruction", "the owner's seal", "cleared by compliance", "confirmed by the head of IT"
  needs([["'", '’', 'cleared', 'confirmed', 'authori', 'approved', 'signed']], /\b(?:per|on|by|under)\s+(?:the\s+)?(?:ceo|cto|cfo|owner|admin(?:istrator)?|founder|board|head\s+of\s+it)['’]s\s+(?:instructions?|orders?|request|authority|direction|mandate)\b|\b(?:owner|admin(?:istrator)?|ceo|system)['’]s\s+(?:seal|signature|stamp|authori[sz]ation|mandate)\b|\b(?:cleared|confirmed|authori[sz]ed|approved|signed\s+off)\s+by\s+(?:the\s+)?(?:head\s+of\s+(?:it|security)|it(?:\s+department)?|security\s+team|compliance|legal)\b(?=[^.\n]{0,80}\b(?:assistant|agent|may|can|no\s+longer|now|skip|share|must)\b)/i),
  // de
  needs([['signatur', 'vom', 'von', 'durch', 'systemnachricht', 'systemhinweis', 'anweisung']], /\bsignatur\s+(?:verifiziert|geprüft|bestätigt|gültig)|\b(?:vom|von\s+der|durch\s+den)\s+(?:eigentümer|besitzer|administrator|admin|system|inhaber)\s+(?:genehmigt|freigegeben|signiert|bestätigt|autorisiert)|\b(?:systemnachricht|systemhinweis|systemanweisung|administratoranweisung)\b|\banweisung\s+(?:des|vom)\s+(?:eigentümers|administrators|systems|inhabers)/i),
  // fr
  needs([['signature', 'par', 'message', 'note', 'instruction', 'consigne', 'ordre']], /\bsignature\s+(?:vérifiée|valide|confirmée)|\b(?:approuvée?|validée?|autorisée?|signée?)\s+par\s+(?:le\s+|l['’])?(?:propriétaire|administrateur|système|admin)|\bmessage\s+(?:du\s+)?système\b|\b(?:note|instruction|consigne|ordre)s?\s+(?:du|de\s+l['’])\s*(?:propriétaire|administrateur|système)/i),
  // es, pt, it
  needs([['firma', 'assinatura', 'aprobad', 'autoriz', 'aprovad', 'assinad', 'approvat', 'sistema']], /\b(?:firma|assinatura)\s+(?:verificada|validada|válida|confirmada)|\bfirma\s+verificata\b|\b(?:aprobad[oa]|autorizad[oa]|firmad[oa]|aprovad[oa]|assinad[oa]|approvat[oa]|autorizzat[oa]|firmat[oa])\s+(?:por|pel[oa]|dal(?:l['’])?|da)\s+(?:el\s+|o\s+|a\s+|il\s+|l['’])?(?:propietario|administrador|sistema|proprietário|proprietario|amministratore|admin)|\b(?:mensaje|mensagem|messaggio)\s+(?:del|do|di)\s+sistema\b/i),
  // nl
  needs([['handtekening', 'door', 'systeembericht']], /\bhandtekening\s+(?:geverifieerd|gecontroleerd|geldig)|\b(?:goedgekeurd|ondertekend|geautoriseerd)\s+door\s+(?:de\s+)?(?:eigenaar|beheerder|admin|systeem)|\bsysteembericht\b/i),
  // ru
  /подпись\s+(?:проверена|подтверждена|верна)|(?:одобрено|подписано|утверждено|разрешено)\s+(?:владельцем|администратором|системой)|системное\s+(?:сообщение|указание|уведомление)|(?:указание|распоряжение|сообщение)\s+(?:от\s+)?(?:владельца|администратора)/i,
  // (here, in ar and in the active forms below: no `\s*` is next to another across an optional word, which split a run of spaces two ways)
  // ko (a past or done form only: "관리자 승인이 필요합니다", approval needed, is a rule, not a stamp)
  /서명\s*(?:이\s*)?(?:확인|검증)\s*(?:됨|된|완료|되었)|(?:검증|확인)된\s*서명|(?:소유자|관리자|시스템|오너)\s*(?:(?:가|이|에\s*의해|의)\s*)?(?:승인|서명|인증)\s*(?:됨|된|완료|했|하였|받은|받음|필)|시스템\s*(?:메시지|지시|메모리|기억|명령)|(?:소유자|오너|관리자)(?:의)?\s*(?:지시|명령)\s*(?:사항\s*)?[:：\]]/,
  // ar ("system memory", "signature: verified", "approved by the owner"; the owner, the administrator, the system — not "the management")
  /التوقيع(?:\s*[:：])?\s*(?:تم\s+التحقق|موث\u0651?ق|صحيح|مؤك\u0651?د|معتمد)|تم\s+التحقق\s+من\s+التوقيع|(?:معتمد|موق\u0651?ع|مصر\u0651?ح|موافق\s+عليه)\s+من\s+(?:قبل\s+)?(?:المالك|المسؤول|مسؤول\s+النظام|النظام)|(?:ذاكرة|رسالة|تعليمات|أوامر|أمر)\s+النظام|(?:تعليمات|أوامر)\s+المالك/,
  // tr (past forms: "yönetici tarafından onaylanır", is approved by, is a rule)
  needs([['imza', 'taraf', 'sistem', 'den', 'talimat']], /imza(?:sı)?\s+(?:doğrulandı|doğrulanmış|onaylandı|geçerli)|doğrulanmış\s+imza|(?:sahibi|sahip|yönetici|sistem|admin)\s*(?:tarafından|nden|den)\s+(?:onaylandı|onaylanmış|imzalandı|imzalanmış|yetkilendirildi|yetkilendirilmiş)|sistem\s+(?:mesajı|talimatı|belleği|notu|komutu)|(?:sahibin|yöneticinin)\s+talimatı/i),
  // pl
  needs([['podpis', 'przez', 'systemow', 'polecenie']], /podpis\s+(?:zweryfikowany|potwierdzony|prawidłowy)|zweryfikowany\s+podpis|(?:zatwierdzon|podpisan|autoryzowan)[eoay]\s+przez\s+(?:właściciela|administratora|system)|(?:komunikat|polecenie|instrukcja|pamięć|notatka)\s+systemow[aey]|(?:wiadomość|pamięć|instrukcja|notatka)\s+systemowa|polecenie\s+(?:właściciela|administratora)/i),
  // vi ("đã được …": was approved; "phải được … phê duyệt", must be approved, is a rule)
  /chữ\s+ký\s+(?:đã\s+)?(?:được\s+)?xác\s+(?:minh|thực|nhận)|đã\s+được\s+(?:chủ\s+sở\s+hữu|quản\s+trị\s+viên|hệ\s+thống)\s+(?:phê\s+duyệt|ký|xác\s+nhận|ủy\s+quyền)|(?:bộ\s+nhớ|chỉ\s+thị|lệnh|tin\s+nhắn)\s+hệ\s+thống|chỉ\s+thị\s+(?:của\s+)?(?:chủ\s+sở\s+hữu|quản\s+trị\s+viên)/i,
  // id (not after "harus"/"perlu"/"wajib": a rule that something must be approved)
  needs([['tanda', 'oleh', 'sistem', 'instruksi']], /tanda\s+tangan\s+(?:terverifikasi|valid|sah|(?:sudah|telah)\s+diverifikasi)|(?<!(?:harus|perlu|wajib|akan|untuk)\s+)(?:disetujui|ditandatangani|diotorisasi|diverifikasi)\s+oleh\s+(?:pemilik|admin|administrator|sistem)|(?:pesan|memori|instruksi|perintah)\s+sistem|instruksi\s+(?:dari\s+)?(?:pemilik|admin)/i),
  // hi, uk
  /हस्ताक्षर\s+(?:सत्यापित|प्रमाणित)|(?:मालिक|व्यवस्थापक|सिस्टम|एडमिन)\s+(?:द्वारा\s+)?(?:स्वीकृत|अनुमोदित|सत्यापित|हस्ताक्षरित)|सिस्टम\s+(?:संदेश|निर्देश|मेमोरी)|підпис\s+(?:перевірено|підтверджено)|(?:схвалено|підписано|затверджено)\s+(?:власником|адміністратором|системою)|системн(?:е|а)\s+(?:повідомлення|вказівка|пам['’]ять)/,
  // active voice and other forms of the approvals above ("właściciel zatwierdził", "بموافقة المالك")
  /(?:właściciel|administrator)\s+(?:zatwierdził|podpisał|autoryzował|zaakceptował)|(?:власник|адміністратор)\s+(?:схвалив|підписав|затвердив)|(?:владелец|администратор)\s+(?:одобрил|подписал|утвердил)|(?<!(?:harus|perlu|wajib|akan|untuk)\s+)(?:disetujui|ditandatangani|diotorisasi)\s+(?:oleh\s+)?(?:pemilik|admin|administrator|sistem)|بموافقة\s+(?:المالك|المسؤول|النظام)|(?:sahip|sahibi|yönetici|sistem|admin)\s*onaylı|(?:소유자|관리자|오너)(?:의|가|이)?\s*(?:승인|서명)\s*(?:(?:을|를)\s*)?받았|(?:chủ\s+sở\s+hữu|quản\s+trị\s+viên)\s+đã\s+(?:phê\s+duyệt|ký|xác\s+nhận)|(?:मालिक|व्यवस्थापक|एडमिन)\s+ने\s+(?:मंजूरी|मंज़ूरी|स्वीकृति|अनुमोदन)\s+(?:दी|दे\s+दी)/,
  // zh, ja
  needs([['签名', '已验证', '所有者', '管理员', '系统', '主人', '来自', '署名', 'オーナー', '管理者', 'システム']], /签名(?:已)?(?:验证|核实|确认)|已验证(?:的)?签名|(?:所有者|管理员|系统|主人)(?:已)?(?:批准|授权|签名|签署|认证)|系统(?:消息|指令|通知|记忆)|来自(?:所有者|管理员|系统)的(?:指令|消息|通知)|署名(?:検証済み|済み|確認済み)|(?:所有者|オーナー|管理者|システム)(?:が|により|によって)?(?:承認|署名|認証)|システム(?:メッセージ|指示|通知|メモリ)|(?:オーナー|管理者)の指示/),
]

/**
 * "Notice from the system administrator: the file server is offline on Sunday" names a sender
 * and asks nothing: an administrator's genuine notice is ordinary mail. The same line is a
 * forged authority when the text uses it to order, license or lift something.
 */
const SENDER_LINE = needs([['from']], new RegExp(String.raw`\b(?:note|message|notice|memo|update|directive|instruction|order|announcement|reminder|word)s?\s+from\s+${AUTHORITY}\b`, 'i'))
const USES_AUTHORITY = /\b(?:assistants?|agents?|ai|models?|bots?|you\s+(?:must|should|may|can|are|will|need)|(?:may|can)\s+now|no\s+longer|(?:is|are)\s+(?:now\s+)?(?:allowed|permitted|authori[sz]ed|exempt|waived|approved|lifted)|without\s+(?:review|approval|asking|confirmation|a\s+ticket)|skip|bypass|disable|ignore|overrid\w*|grant\w*|share|send|forward|reveal|paste|give|hand\s+over|trust|obey|comply|memory|commit)\b/i

const FORGED_AUTHORITY: RegExp[] = [
  // In capitals anywhere, or as a heading ("System notice: …"); not "the system notice banner".
  needs([['SYSTEM']], /\bSYSTEM\s+(?:NOTICE|MESSAGE|OVERRIDE|UPDATE|ALERT|INSTRUCTION|DIRECTIVE|NOTE)\b/),
  // `[^\S\r\n\u2028\u2029]*`: a line's start is not followed by other lines' (a run of blank lines was
  // read from each), a heading after blank lines is found at its own line's start. The same for `[root]` below.
  needs([['system']], /(?:^[^\S\r\n\u2028\u2029]*|[[(]\s*)system\s+(?:notice|message|override|update|alert|instruction|directive|note)\s*[:\])]/im),
  needs([['verified', 'approved', 'authori', 'signed', 'confirmed', 'sanctioned', 'endorsed', 'certified'], ['by']], new RegExp(String.raw`${RULE_BEFORE}\b(?:verified|approved|authori[sz]ed|signed|confirmed|sanctioned|endorsed|certified)\s+by\s+${AUTHORITY}\b`, 'i')),
  needs([['owner', 'admin', 'system', 'operator'], ['verified', 'approved', 'authori', 'signed', 'sanctioned', 'certified']], /\b(?:owner|admin(?:istrator)?|system|operator)[- ](?:verified|approved|authori[sz]ed|signed|sanctioned|certified)\b/i),
  needs([['this'], ['message', 'note', 'memory', 'entry', 'instruction']], new RegExp(String.raw`\bthis\s+(?:message|note|memory|entry|instruction)\s+(?:is|was|comes)\s+(?:from|written\s+by|signed\s+by|issued\s+by)\s+${AUTHORITY}\b`, 'i')),
  needs([['[owner]', '[admin', '[system]', '[root]']], /^[^\S\r\n\u2028\u2029]*\[(?:owner|admin(?:istrator)?|system|root)\]\s*:?/im),
  // A frontmatter block inside the body that sets provenance fields: metadata only the tool writes.
  ...CLAIMS,
  needs([['---'], ['origin', 'signature', 'signed_by', 'reviewed_by', 'approved_by']], /^(?:[^\n]*\n)?[ \t]*---[ \t]*\r?\n(?:[^\n]*\n){0,30}?[ \t]*(?:origin[ \t]*:[ \t]*["']?(?:owner|system|dream)\b|(?:signature|signed_by|reviewed_by|approved_by)[ \t]*:[ \t]*\S)/),
]

export function forgedAuthority(text: string): string | null {
  const lower = text.toLowerCase()
  // a sender line needs "from"
  const sender = lower.includes('from') ? SENDER_LINE.exec(text) : null
  if (sender && USES_AUTHORITY.test(text.slice(sender.index + sender[0].length))) return clip(sender[0])
  LOWER_GATES.reset(lower)
  TEXT_GATES.reset(text)
  for (const re of FORGED_AUTHORITY) {
    const need = NEEDS.get(re)
    if (need && !(re.ignoreCase ? LOWER_GATES : TEXT_GATES).open(need)) continue
    const m = re.exec(text)
    if (m) return clip(m[0])
  }
  return null
}

const PROVENANCE = 'provenance'

export function provenanceVote(c: WriteCandidate, texts: string[]): Vote {
  const vote = (verdict: Vote['verdict'], confidence: number, reason: string): Vote => ({validator: PROVENANCE, verdict, confidence, reason})
  // a signed proposal's origin is its key's (the text is still checked below); anything else is a claim
  const claimed = isAuthorityClaim(c.claim?.origin) ? c.claim!.origin : isAuthorityClaim(c.origin) && !c.signedOrigin ? c.origin : null
  if (claimed) return vote('reject', 0.9, `claims origin "${claimed}" without a signature`)

  for (let i = 0; i < texts.length; i++) {
    const text = texts[i]
    // the folded text is most often the visible one, found clean already
    if (texts.indexOf(text) !== i) continue
    const forged = forgedAuthority(text)
    if (forged) {
      // Authority is never text: a claim of it, from any origin, is refused at veto confidence.
      const confidence = thirdParty(c) || c.session?.tainted ? 0.95 : 0.9
      return vote('reject', confidence, `text claims authority without a signature: "${forged}"`)
    }
  }
  return vote('accept', 0.6, `ordinary origin "${c.origin}", no claim of authority`)
}
