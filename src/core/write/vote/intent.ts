/**
 * An agenda for the agent: the general shape of a persistent prompt injection, read from
 * signals that are each common in honest text and rare together.
 *
 * The instruction rules (instruction.ts) each name one phrasing of an attack; wording they
 * were never written for slips past them. This check looks instead for what every injection
 * stored in memory has to do, whatever its words: it must reach the agent that reads it, and
 * make that agent act against its owner. Six independent signals, each in several languages:
 *
 * - reader: the text addresses the model that reads it ("to the AI reading this page", "if
 *   you are an assistant", "the bot that sorts this inbox", "whoever processes this", "your
 *   operator", "your memory");
 * - standing: it is meant to outlast the moment ("from now on", "next time", "whenever",
 *   "always", "remember this", "in later sessions", "save it to memory");
 * - lifted: a control is dropped ("skip the call-back", "no need to check with IT",
 *   "without approval", "pre-approved", "disable the review");
 * - concealed: the act is hidden from the owner ("don't tell the user", "leave it out of the
 *   commit message", "quietly");
 * - sensitive: it touches money, secrets, data leaving, access, deploys, deletion or another
 *   tenant ("release the transfer", "the .env file", "admin rights", "push to main");
 * - framed: the rules are framed away ("hypothetically", "a simulation", "you are now…",
 *   "no restrictions").
 *
 * One signal alone is ordinary (a help page names the assistant, a procedure says "always",
 * a bank mail names a transfer); an agenda is two of them in one passage (a sentence and the
 * one after it) in one of the pairings below. Honest text states facts and asks people; it
 * seldom addresses a model *and* asks it for something sensitive, or drops a control on a
 * sensitive act, or hides one. The pairings were chosen from that principle, then checked
 * against the honest sets (README "How well the vote works"); none was fitted to a case.
 *
 * A hit is of medium strength: from a third-party origin or a tainted session the delivery
 * validator refuses it (quarantine); from direct chat it is dissent the reviewer sees.
 */
import {clip} from '../../text/clip.js'
import {ABOUT_ATTACKS, type InstructionHit, QUOTATION, SENTENCE_SPLIT} from './instruction.js'

export type Signal = 'reader' | 'standing' | 'lifted' | 'concealed' | 'sensitive' | 'framed' | 'solicited'

// Each signal is an English pattern (word boundaries) and one for other languages (no \b:
// it is ASCII-only in JavaScript). Patterns read lower-cased text.

const AI = String.raw`(?:ai|a\.i\.|llms?|gpt|claude|copilot|chatbots?|bots?|assistants?|agents?|models?|language\s+models?|note-?takers?|summari[sz]ers?)`

const READER_EN = new RegExp(
  [
    // a vocative or a note addressed to a model
    String.raw`\b(?:to|for|attention|attn|note\s+(?:to|for)|message\s+(?:to|for)|instructions?\s+for|dear|hey|hello|hi)[:\s]+(?:(?:the|any|all|every|each|our)\s+(?:[\w-]+\s+)?|an?\s+)?(?:ai\b|a\.i\.|llms?\b|gpt|claude|copilot|chatbots?\b|bots?\b|assistants?\b|agents?\b|models?\b|language\s+models?|automated\s+\w+|note-?takers?|summari[sz]ers?)(?!['’]s\b)(?!\s+(?:manager|director|editor|professor|principal|coach|controller|secretary|to\s+the|general|engineer|producer|curator|librarian|teacher|buyer|planner|accountant))`,
    String.raw`\bif\s+(?:an?\s+|the\s+)?(?:ai\s+)?(?:assistant|agent|bot|model|llm|copilot|ai)\s+(?:is|does|files|reads|handles|processes|sees|gets|opens|works|answers|writes)\b`,
    // a model described by what it is doing with this text
    String.raw`\b${AI}\s+(?:(?:that|which|who)\s+(?:is\s+|are\s+)?)?(?:reading|reads|processing|processes|parsing|parses|summari[sz]ing|summari[sz]es|handling|handles|ingesting|reviewing|reviews|triaging|triages|sorting|sorts|indexing|scanning|answering|manages|managing|monitors|monitoring|working\s+(?:on|in|with)|editing|edits|running|crawling)\s+(?:[\w-]+\s+){0,2}?(?:this|these|the\s+following|here|my|our)\b`,
    String.raw`\b(?:whoever|whatever|anyone|anything|any\s+(?:ai|system|tool|agent|assistant|model|bot|program))\s+(?:or\s+(?:whatever|whoever|anyone|anything)\s+)?(?:is\s+|are\s+|that\s+is\s+)?(?:reading|processing|parsing|summari[sz]ing|handling|reviewing|receiving)\s+(?:[\w-]+\s+){0,2}?(?:this|these|the\s+following|here|my|our)\b`,
    String.raw`\bif\s+you\s+(?:are|'re|happen\s+to\s+be)\s+(?:an?\s+)?(?:ai|llm|language\s+model|assistant|agent|bot|automated|chatbot|model|copilot|large\s+language)`,
    String.raw`\b(?:as\s+an?\s+(?:ai|assistant|agent|language\s+model)\b|you,?\s+the\s+(?:ai|assistant|agent|bot|model)\b|(?:ai|automated)\s+(?:reviewers?|readers?|agents?|tools?|assistants?|systems?|crawlers?|coders?)\s*:)`,
    // a directive to the assistant in the third person
    String.raw`\bthe\s+(?:ai\s+)?(?:assistant|agent|bot|copilot|ai|model)\s+(?:is\s+(?:now\s+)?(?:expected|instructed|authori[sz]ed|allowed|permitted|required|asked|told|cleared)\s+to|is\s+to|should\s+now|must\s+now|needs\s+to|has\s+to|can\s+(?:carry|go\s+ahead|just|simply|safely))\b`,
    String.raw`\byour\s+(?:[\w-]+\s+)?(?:ai|assistant|bot|agent|copilot)\b(?!\s+(?:is|was)\s+(?:a|an|the)\b)`,
    String.raw`\b(?:to\s+)?(?:whichever|whatever|any)\s+(?:ai\s+)?(?:tool|agent|assistant|model|bot|copilot|system)\s+(?:that\s+)?(?:is\s+)?(?:reading|editing|processing|parsing|summari[sz]ing|handling|reviewing|working|opens?|reads?|edits?)\b`,
    // `[^\S\n]*`: a run of blank lines is read once (a break within the run is matched at its last newline)
    String.raw`(?:^|[\n(])[^\S\n]*(?:[#*>/-]+\s*)?(?:ai|assistant|agent|bot|llm|copilot)s?(?:\s+[\w-]+)?\s*:`,
    // the model's own world, addressed
    String.raw`\byour\s+(?:operator|developers?|creators?|system\s+prompt|programming|training|guardrails|safety\s+(?:rules|filters|guidelines|settings)|write\s+rules|review\s+queue|memory|memories|saved\s+notes|stored\s+notes|long-term\s+memory|context\s+window|instructions\s+(?:from|given)|previous\s+instructions|original\s+instructions)\b`,
  ].join('|'),
  'i',
)
const READER_OTHER = new RegExp(
  [
    String.raw`asistente\s+(?:de\s+)?(?:ia|virtual)|(?:al|para\s+el|nota\s+para\s+el|si\s+eres\s+(?:un|el)|querido)\s+asistente|(?:la\s+)?ia\s+que\s+(?:lea|procese|lee)`,
    String.raw`(?:à\s+l['’]|pour\s+l['’]|note\s+pour\s+l['’]|si\s+tu\s+es\s+une?\s+|si\s+vous\s+êtes\s+une?\s+|cher\s+)(?:assistant|ia\b|agent|intelligence)|l['’](?:assistant|ia)\s+qui\s+(?:lit|traite|lira)`,
    String.raw`ki-?(?:assistent|agent|modell|system)|(?:an\s+den|für\s+den|hinweis\s+für\s+den|wenn\s+du\s+ein|liebe[rs]?)\s+(?:ki|assistent|agent|bot)`,
    String.raw`assistente\s+(?:ia|ai|virtuale|de\s+ia|de\s+ai|virtual)|(?:all['’]|per\s+l['’]|nota\s+per\s+l['’]|se\s+sei\s+un\s+|ao\s+|para\s+o\s+|nota\s+para\s+o\s+|se\s+você\s+(?:é|for)\s+um\s+)(?:assistente|agente|ia\b)|(?:assistente|agente)\s+que\s+(?:ler|leia|processar)`,
    String.raw`(?:ai-?)?assistent\s+die|(?:aan\s+de|voor\s+de|als\s+je\s+een)\s+(?:ai|assistent|agent)`,
    String.raw`asystent(?:a|em|ów|ie)?\s+(?:ai|si)|jako\s+asystent|(?:jeśli|jezeli|jeżeli)\s+jesteś\s+(?:asystentem|ai|botem)|dla\s+asystent`,
    String.raw`ии-?(?:ассистент|агент|модел)|(?:если\s+ты|для)\s+(?:ии|ассистент|бот|нейросет)|ассистент\w*,?\s+(?:который|читающ)|нейросеть`,
    String.raw`yapay\s+zek[aâ]\s+asistan|(?:asistan|yapay\s+zek[aâ])\w{0,40}\s+için|asistan(?:ıysan|san)`,
    String.raw`ai助手|ai助理|人工智能助手|智能助手|ai\s*代理|致ai|给ai|阅读此|处理此`,
    String.raw`aiアシスタント|aiエージェント|アシスタントへ|アシスタントの方|aiへ|これを読んでいる|(?:処理|対応|閲覧|確認|読ん)\S{0,4}(?:アシスタント|エージェント)`,
    String.raw`ai\s*(?:어시스턴트|비서|에이전트)|어시스턴트(?:에게|님)|인공지능\s*(?:비서|어시스턴트)`,
    String.raw`المساعد\s+الذكي|مساعد\s+الذكاء|إلى\s+المساعد|أيها\s+المساعد`,
    String.raw`एआई\s+सहायक|एआई\s+असिस्टेंट|सहायक\s+के\s+लिए`,
  ].join('|'),
  'i',
)

// After "save", no `\s*` right after its `\s+`: a long run of spaces was split two ways.
const STANDING_EN = new RegExp(
  String.raw`\b(?:from\s+now\s+on|from\s+here\s+on|going\s+forward|moving\s+forward|henceforth|hereafter|in\s+(?:the\s+)?future|for\s+(?:all|every|any)\s+(?:future|later|subsequent|upcoming)|next\s+time|every\s+time|each\s+time|whenever|always|permanently|for\s+good|by\s+default|automatically|(?:as\s+a\s+)?(?:standing|permanent|default|general)\s+(?:rule|instruction|order|preference|policy|note)|survives?\s+(?:a\s+)?restarts?|across\s+(?:restarts|sessions)|\(persist\)|(?:continue|carry\s+on|keep\s+going)\s+(?:with\s+)?(?:exactly\s+)?(?:the\s+same|like\s+this|this\s+way|that\s+way|in\s+the\s+same\s+way)|(?:keep|continue)\s+(?:on\s+)?(?:skipping|sending|approving|paying|releasing|sharing|doing\s+(?:it|this|that|so))|(?:in|for)\s+every\s+(?:reply|response|answer|request|case|conversation)|(?:in|for|into|across)\s+(?:all\s+)?(?:later|future|subsequent|other|every)\s+(?:sessions?|conversations?|chats?|tasks?|repositories|repos|projects)|(?:remember|memori[sz]e|keep\s+in\s+mind)\s+(?:this|that|it|the\s+following|to)\b|keep\s+(?:this|that|it)\s+in\s+mind|(?:save|store|record|write|note|keep|add|file|pin|log)\s+(?:(?:this|that|it|the\s+following)\s*)?(?:\w+\s+){0,3}?(?:in|to|into|as)\s+(?:your\s+|the\s+|a\s+)?(?:memory|memories|long-term|notes|standing|preferences?|trusted|verified\s+fact))`,
  'i',
)
const STANDING_OTHER = new RegExp(
  String.raw`a\s+partir\s+de\s+ahora|de\s+ahora\s+en\s+adelante|en\s+(?:el\s+)?futuro|siempre|recuerda|guárdalo|à\s+partir\s+de\s+maintenant|désormais|dorénavant|à\s+l['’]avenir|toujours|souviens-toi|retiens|mémorise|ab\s+sofort|ab\s+jetzt|künftig|zukünftig|in\s+zukunft|immer|merk\s+dir|merke\s+dir|speichere|d['’]ora\s+in\s+poi|da\s+ora\s+in\s+poi|in\s+futuro|sempre|ricorda|memorizza|a\s+partir\s+de\s+agora|daqui\s+em\s+diante|no\s+futuro|lembre-se|memorize|guarde|vanaf\s+nu|voortaan|in\s+de\s+toekomst|altijd|onthoud|od\s+teraz|od\s+tej\s+pory|w\s+przyszłości|zawsze|zapamiętaj|отныне|впредь|с\s+этого\s+момента|всегда|запомни|сохрани|на\s+будущее|bundan\s+sonra|her\s+zaman|gelecekte|hatırla|kaydet|从现在开始|从今以后|今后|以后|永远|始终|总是|记住|保存到|今後|これから|常に|いつも|覚えて|記憶して|앞으로|이제부터|항상|언제나|기억해|저장해|من\s+الآن|دائما|دائمًا|تذكر|احفظ|अब\s+से|हमेशा|याद\s+रख`,
  'i',
)

// What a verb of lifting lifts: the words up to the control never pass "by", which names who did it
// ("password saving was turned off by policy"), not what was turned off.
const CONTROL_NOUN = String.raw`(?:call-?backs?|calling\s+(?:\w+\s+)?back|loop(?:ing)?\s+in|team\b|approv\w+|reviews?|reviewers?|confirm\w*|verif\w+|checks?|checking|sign-?offs?|tickets?|mfa|2fa|two-?factor|second\s+(?:approver|signature|pair\s+of\s+eyes|person)|four-?eyes|dual\s+control|permission|consent|authori[sz]ation|validation|process|procedure|polic(?:y|ies)|rules?|restrictions?|safeguards?|guardrails?|filters?|queue|quarantine|redaction|logging|audit|it\b|security|compliance|the\s+(?:user|owner|manager|admin|team|finance|security|office)|a\s+manager|your\s+(?:manager|team|admin))`
const LIFTED_EN = new RegExp(
  [
    // the `\s*` after a verb is not after the run of spaces "without (any)" ends with: the run was split two ways
    String.raw`\b(?:(?:skip(?:s|ped|ping)?|bypass(?:es|ed|ing)?|circumvent\w*\b|waiv(?:e|es|ed|ing)|disabl(?:e|es|ed|ing)|deactivat\w+\b|turn(?:s|ed|ing)?\s+off|switch(?:es|ed|ing)?\s+off|suspend\w*\b|forgo\w*\b|omit\w*\b|dispense\s+with|do\s+away\s+with|no\s+need\s+(?:to|for)|needn['’]?t|with\s+no|needs?\s+no|requires?\s+no|stop(?:s|ped)?|exempt(?:ed)?\s+from|(?:don['’]?t|do\s+not|doesn['’]?t|does\s+not|won['’]?t|will\s+not)\s+(?:need|have)\s+to|don['’]?t\s+(?:bother|wait)|(?:is|are)\s+(?:no\s+longer|not)\s+(?:required|needed|necessary)|unnecessary)\s*|without\s+(?:a\s+|an\s+|any\s+|the\s+|waiting\s+for\s+(?:a\s+|an\s+|the\s+)?|asking\s+|checking\s+(?:with\s+)?|confirming\s+(?:with\s+)?|going\s+through\s+(?:the\s+)?)?)(?:(?!by\s)[\w'-]+\s+){0,4}?${CONTROL_NOUN}`,
    // "anyone" is a control only as the one who would be asked
    String.raw`\b(?:without|no\s+need\s+to|(?:don['’]?t|do\s+not)\s+(?:need|have)\s+to)\s+(?:ask(?:ing)?|check(?:ing)?\s+with|consult(?:ing)?|clear(?:ing)?\s+it\s+with)\s+(?:anyone|anybody)\b`,
    String.raw`\b(?:pre-?approved|auto-?approv\w+|already\s+(?:been\s+)?(?:approved|cleared|vetted|signed\s+off|verified)|(?:is|are|has\s+been|have\s+been)\s+cleared|no\s+questions\s+asked|${CONTROL_NOUN}(?:\s+(?:and|or)\s+(?:[\w-]+\s+){0,2}?${CONTROL_NOUN})?(?:\s+(?:step|stage|requirement|rule|phase))?[\s=:]+(?:(?:was|were|is|are|got|been|being|(?:can|may|would|will|should)\s+be)\s+)?(?:skipped|bypassed|waived|disabled|switched\s+off|turned\s+off|not\s+(?:needed|required|necessary)|unnecessary|optional|useless|pointless|overkill|excessive|a\s+waste\b|adds\s+(?:no|nothing)|caught\s+nothing)|(?:on|with)\s+(?:my|his|her|their|one|a)\s+(?:own\s+)?(?:approval|signature|sign-?off|say-?so)\s+alone|\b(?:single|sole|one)\s+(?:signature|approver|approval|sign-?off)\b|treated\s+as\s+(?:fully\s+)?(?:authori[sz]ed|approved|verified|trusted|pre-?approved)|(?:can|may)\s+(?:also\s+)?approve\s+(?:it|their\s+own|his\s+own|her\s+own)|on\s+the\s+spot)\b`,
  ].join('|'),
  'i',
)
const LIFTED_OTHER = new RegExp(
  String.raw`sin\s+(?:la\s+|una\s+)?(?:aprobación|revisión|verificación|confirmación|llamada|consultar|preguntar|autorización)|no\s+(?:hace\s+falta|es\s+necesari[oa])|desactiv|omit(?:e|ir|a)\s|sans\s+(?:la\s+|une\s+)?(?:validation|vérification|approbation|confirmation|contrôle|rappel|demander|autorisation)|pas\s+besoin\s+de|désactiv|contourn|ohne\s+(?:freigabe|prüfung|rückruf|genehmigung|bestätigung|rückfrage|review|zu\s+(?:fragen|prüfen))|nicht\s+(?:mehr\s+)?(?:nötig|notwendig|erforderlich)|(?:ma|sa|une)\s+seule\s+signature|con\s+(?:la\s+)?(?:mi\s+|sua\s+|mia\s+)?sola\s+firma|(?:mit|nur)\s+(?:meiner|einer)\s+(?:einzigen\s+)?unterschrift|apenas\s+(?:com\s+)?(?:a\s+)?minha\s+assinatura|één\s+handtekening|geen\s+(?:\S+\s+){0,3}(?:meer\s+)?nodig|deaktivier|überspring|umgeh|senza\s+(?:approvazione|verifica|revisione|conferma|chiedere|autorizzazione)|non\s+(?:serve|è\s+necessari)|disattiv|salta(?:re)?\s+(?:la|il)|sem\s+(?:aprovação|revisão|verificação|confirmação|perguntar|autorização)|não\s+(?:é\s+necessári|precisa)|desativ|zonder\s+(?:goedkeuring|controle|review|bevestiging|te\s+vragen)|niet\s+(?:meer\s+)?nodig|uitschakel|schakel\s+\S+\s+uit|overslaan|bez\s+(?:weryfikacji|zatwierdzenia|przeglądu|potwierdzenia|pytania|zgody)|wyłącz|pomiń|nie\s+(?:trzeba|jest\s+potrzebn)|без\s+(?:проверки|одобрения|подтверждения|согласования|ревью|вопросов)|отключи|пропусти|не\s+нужно|не\s+требуется|обойди|onay(?:ı)?\s+(?:olmadan|almadan)|kontrol(?:ü)?\s+olmadan|devre\s+dışı|gerek\s+yok|无需|不需要|跳过|绕过|禁用|免审|承認なし|確認なし|(?:承認|確認|審査|チェック|レビュー|許可|承认|确认|审批|审核|检查|验证|批准)[^\s、，,。]{0,5}不要|不要[^\s、，,。]{0,6}?(?:审批|审核|确认|核实|检查|验证|批准|等待|回电|打电话|電話)|スキップ|無効に|省略|승인\s*없이|검토\s*없이|확인\s*없이|건너뛰|비활성화|필요\s*없|بدون\s+موافقة|بدون\s+مراجعة|تخط|عطل|बिना\s+(?:अनुमति|जांच|मंजूरी)`,
  'i',
)

const CONCEALED_EN = new RegExp(
  String.raw`\b(?:(?:do\s+not|don['’]?t|never|without|no\s+need\s+to|avoid)\s+(?:tell(?:ing)?|mention(?:ing)?|inform(?:ing)?|notify(?:ing)?|alert(?:ing)?|let(?:ting)?\s+\w+\s+know|reveal(?:ing)?|disclos\w+|flag(?:ging)?|surfac\w+|bring(?:ing)?\s+(?:it|this|that)\s+up|acknowledg\w+)|(?:keep|leave)\s+(?:this|it|that|them|the\s+\w+)\s+(?:out\s+of|off\s+(?:the\s+)?(?:record|log)|between\s+us|quiet|secret|hidden)|leave\s+(?:(?:this|it|that|the)\s+)?(?:[\w-]+\s+)?out\s+of\s+(?:the\s+)?(?:commit|summary|log|report|pr|description|changelog|reply|response)|silently|quietly|secretly|covertly|no\s+one\s+will\s+(?:notice|know)|nobody\s+will\s+(?:notice|know)|without\s+(?:a\s+trace|anyone\s+(?:knowing|noticing))|between\s+you\s+and\s+me|(?:do\s+not|don['’]?t)\s+(?:print|show|display|log|record|echo)\s+(?:it|this|the\s+decoded|the\s+result|what))\b`,
  'i',
)
const CONCEALED_OTHER = new RegExp(
  String.raw`no\s+(?:se\s+lo\s+|le\s+|les\s+)?(?:digas|menciones|informes|comuniques|avises)|sin\s+(?:decir|informar|avisar)(?:le|les)?|en\s+secreto|ne\s+(?:le\s+|lui\s+|leur\s+|l['’])?(?:dis|mentionne|informe|signale|préviens)|sans\s+(?:le\s+|l['’])?(?:dire|mentionner|informer|prévenir)|discrètement|en\s+secret|n['’]en\s+parle[zr]?\s+pas|sans\s+en\s+parler|nessuno\s+se\s+ne\s+accorgerà|nadie\s+se\s+(?:dará|va\s+a\s+dar)\s+cuenta|niemand\s+(?:wird\s+es|merkt)|ninguém\s+(?:vai\s+)?(?:notar|perceber)|(?:nicht|nichts)\s+(?:erwähnen|sagen|melden|mitteilen|verraten)|ohne\s+\S+\s+(?:zu\s+)?(?:informieren|benachrichtigen|erwähnen)|stillschweigend|heimlich|verschweig|non\s+(?:dirlo|dire|menzionare|informare|avvisare|segnalare)|senza\s+(?:dire|informare|avvisare)|di\s+nascosto|não\s+(?:diga|mencione|informe|avise|conte)|sem\s+(?:dizer|informar|avisar)|em\s+segredo|(?:niet|niets)\s+(?:vertellen|melden|zeggen|vermelden)|zonder\s+\S+\s+te\s+(?:informeren|melden)|in\s+het\s+geheim|nie\s+(?:mów|informuj|wspominaj|zgłaszaj)|bez\s+informowania|po\s+cichu|w\s+tajemnicy|не\s+(?:говори|сообщай|упоминай|рассказывай|информируй)|никому\s+не|тайно|незаметно|söyleme|bildirme|bahsetme|haber\s+verme|sessizce|gizlice|不要告诉|别告诉|不要提及|不要通知|不要让\S{0,6}知道|悄悄|偷偷|言わないで|知らせないで|伝えないで|伝えず|知らせず|黙って|こっそり|内緒|알리지\s*마|말하지\s*마|알리지\s*않|몰래|لا\s+تخبر|لا\s+تذكر|سرا|मत\s+बता|न\s+बताएं|चुपचाप`,
  'i',
)

const SENSITIVE_EN = new RegExp(
  [
    // money
    String.raw`\b(?:wires?|wired|wire\s+transfer|transfers?|payments?|pay(?:ing)?|payouts?|remit\w*|refunds?|deposits?|release\s+(?:the\s+)?(?:[\w-]+\s+)?(?:funds|payment|transfer|wire|money|deposit)|iban|swift|bic|sort\s+code|routing\s+number|bank\s+(?:account|details)|account\s+(?:number|details)|payee|beneficiary|gift\s+cards?|bitcoin|crypto\s+wallet|invoices?)\b`,
    // secrets and the agent's data
    String.raw`(?:\b(?:api[\s_-]?keys?|access\s+keys?|secret\s+keys?|private\s+keys?|(?:access|auth|bearer|deploy|session|api)\s+tokens?|tokens|passwords?|passphrases?|passcodes?|credentials?|secrets|ssh\s+keys?|cookies|env(?:ironment)?\s+var\w*|conversations?|chat\s+(?:history|logs?)|transcripts?|customer\s+(?:data|records|list|export|details|emails?)|personal\s+data|(?:your|the|all|stored|saved)\s+(?:memory|memories|notes))\b|\.env\b|\benv\s*\||~?\/?\.ssh\b|\bid_rsa\b|\brecovery\s+codes?\b|\bmaster\s+password\b|\bvault\s+(?:keys?|entries|export|contents|secrets?|passwords?)\b|\blong-term\s+memory\b|\bmemory\s+(?:export|dump)\b|\b(?:assistant|agent|bot)['’]s\s+(?:[\w-]+\s+)?memory\b|\bits\s+(?:[\w-]+\s+)?memory\b)`,
    // access, deploys, deletion, other tenants
    String.raw`\b(?:admin(?:istrator)?\s+(?:rights|access|role|privileges|mode)|(?:is|are|as|becomes?|be)\s+(?:an?\s+)?(?:[\w-]+\s+)?admin(?:istrator)?s?\b|root\s+access|grant\w*|permissions?|allow-?list|white-?list|trusted\s+(?:senders?|domains?|sources?|contacts?)|deploy\w*|push\w*\s+(?:\w+\s+)?(?:directly\s+)?to\s+(?:main|master|prod\w*)|production|force[- ]push|wip(?:e|ing)|eras(?:e|ing)|delet(?:e|ing)\s+(?:all|the|every|your)|other\s+(?:tenants?|customers?|clients?|workspaces?)|another\s+(?:tenant|customer|client|workspace|company)['’]?s?)\b`,
    // something sent to an outside address
    String.raw`\b(?:send|forward|post|upload|share|paste|e-?mail|mail|reply\s+with|submit|copy|bcc|cc)\b[^.\n]{0,80}?(?:(?<![\w.+-])[\w.+-]{1,64}@[\w-]+\.\w|https?:\/\/|\[redacted:email|\bpublic\b|\bgist\b|\bwebhook\b|\bpastebin\b)`,
  ].join('|'),
  'i',
)
const SENSITIVE_OTHER = new RegExp(
  String.raw`transferencia|pago|virement|paiement|überweisung|zahlung|bonifico|pagamento|transferência|overboeking|betaling|przelew|płatnoś|перевод|платеж|платёж|havale|ödeme|转账|付款|汇款|振込|送金|支払|송금|이체|결제|تحويل|भुगतान|contraseña|mot\s+de\s+passe|passwort|kennwort|senha|wachtwoord|hasło|пароль|токен|ключ|şifre|parola|密码|密钥|令牌|パスワード|トークン|비밀번호|토큰|كلمة\s+المرور|पासवर्ड|conversaciones|conversations|gespräche|verläufe|conversazioni|conversas|gesprekken|rozmow|переписк|разговор|konuşma|对话|聊天记录|会話|履歴|대화|محادثات|बातचीत|producción|produktion|produzione|produção|productie|produkcj|продакшн|ветку\s+main|gałęzi\s+main|branch\s+main|rama\s+main|main-?branch|klucz|tokeny|zmienne\s+środowiskowe|variables?\s+de\s+entorno|variables?\s+d['’]environnement|umgebungsvariablen|variabili\s+d['’]ambiente|variáveis\s+de\s+ambiente|omgevingsvariabelen|переменн\S{0,40}\s+окружения|環境変数|环境变量|palavras?-passe|claves|coffre|tresor|cofre|cassaforte|kluis|sejf|хранилищ|mot\s+de\s+passe|mastera?-?пароль`,
  'i',
)

const FRAMED_EN = new RegExp(
  String.raw`\b(?:hypothetical(?:ly)?|simulat(?:ed|ion)|role-?play\w*|let['’]?s\s+play|a\s+game\b|let['’]?s\s+pretend|pretend\s+(?:that\s+)?(?:you|you['’]re|we|this\s+is|it['’]s|it\s+is|there\s+(?:is|are))\b|imagine\s+(?:you|that\s+you|a\s+(?:world|version|mode))|you\s+are\s+now|you['’]re\s+now|stay\s+in\s+character|in\s+character|no\s+(?:rules|restrictions|limits|filters|policy|policies|guidelines|safeguards|guardrails|policy\s+layer)|without\s+(?:any\s+)?(?:rules|restrictions|limits|filters|guardrails)|unrestricted|unfiltered|jailbr\w+|(?:developer|god|sandbox|unrestricted|jailbreak|dan)\s+mode|you(?:['’]re|\s+are)\s+(?:now\s+)?(?:in|operating\s+in|running\s+in|switched\s+to)\s+(?:[\w-]+\s+)?mode|fictional|thought\s+experiment|nothing\s+(?:here\s+|in\s+it\s+)?is\s+real|no\s+(?:real\s+)?consequences|tabletop\s+exercise)\b`,
  'i',
)
const FRAMED_OTHER = new RegExp(
  String.raw`hipotétic|simulación|imagina\s+que|juego\s+de\s+rol|hypothétique|jeu\s+de\s+rôle|imagine\s+que\s+tu|hypothetisch|rollenspiel|stell\s+dir\s+vor|ipotetic|simulazione|immagina\s+(?:di|che)|gioco\s+di\s+ruolo|simulação|imagine\s+que\s+você|simulatie|stel\s+je\s+voor|hipotetyczn|symulacj|wyobraź\s+sobie|гипотетич|симуляци|представь|ролев|varsayımsal|simülasyon|hayal\s+et|假设|模拟|想象|角色扮演|仮に|シミュレーション|想像して|ロールプレイ|가정해|시뮬레이션|상상해|역할극`,
  'i',
)

// A secret asked to be sent outward: no honest third party asks an agent to send, post or
// paste a password, a key, its memory or a conversation anywhere. It is an agenda on its own,
// but only within one sentence, and not where the sentence forbids it ("never send your
// password by email") or tells of an attack ("the scammers asked staff to reply with…").
const SECRET_EN = /\b(?:api[\s_-]?keys?|access\s+keys?|secret\s+keys?|private\s+keys?|ssh\s+keys?|(?:access|auth|bearer|deploy|session|api|oauth|bot)\s+tokens?|tokens|passwords?|passphrases?|passcodes?|pins?|credentials?|secrets|login\s+details|(?:2fa|mfa|one-time|otp|verification)\s+codes?|recovery\s+codes?|master\s+password|env(?:ironment)?\s+var\w*|cookies|(?:conversation|chat)\s+(?:history|histories|logs?)|transcripts?|long-term\s+memory|memory\s+(?:export|dump)|(?:full|whole|complete|entire)\s+(?:\w+\s+)?memory|vault\s+(?:keys?|entries|export|contents|secrets?|passwords?)|\w+_(?:key|token|secret|password)s?)\b|\.env\b|~?\/?\.ssh\b|\bid_rsa\b/
// Where a word's ending is read up to the next word (`истори\S{0,40}\s+переписки`), it is read
// to 40 signs: a word that repeats the stem ("историистории…") was read from each repeat to its end.
const SECRET_OTHER = /contraseñ|\bclaves?\b|mots?\s+de\s+passe|passw(?:o|ö)rt|kennw(?:o|ö)rt|парол|mật\s+khẩu|kata\s+sandi|암호|كلمات\s+المرور|\bsenhas?\b|palavras?-passe|wachtwoord|hasł|haseł|пароль|ключ|токен|şifre|parola|密码|密钥|令牌|パスワード|トークン|비밀번호|토큰|كلمة\s+المرور|पासवर्ड|memoria\s+a\s+(?:largo|lungo)\s+(?:plazo|termine)|mémoire\s+à\s+long\s+terme|langzeitgedächtnis|memória\s+de\s+longo\s+prazo|langetermijngeheugen|pamięć\s+długotrwał|долговременн\S{0,40}\s+памят|会話履歴|对话记录|聊天记录|대화\s*기록|historial\s+de\s+(?:las\s+)?conversaciones|historique\s+des\s+conversations|gesprächsverlauf|cronologia\s+delle\s+conversazioni|histórico\s+(?:de|das)\s+conversas|gespreksgeschiedenis|historia\s+rozmów|истори\S{0,40}\s+переписки|zmienne\s+środowiskowe|variables?\s+de\s+entorno|variables?\s+d['’]environnement|umgebungsvariablen|variabili\s+d['’]ambiente|variáveis\s+de\s+ambiente|omgevingsvariabelen|переменн\S{0,40}\s+окружения|環境変数|环境变量/
// Sending goes somewhere by itself; pasting, posting or sharing does only with a place named
// that others read ("into a reply", "as a comment", "to https://…"), not a local file.
const SEND_EN = /\b(?:send|sending|sends|forward|forwarding|(?:e-?mail|mail)(?=\s+(?:it|them|this|that|these|those|the|your|its|all|every|any|a|an|me|us|him|her|[\w.+-]+@))|reply\s+(?:to\s+[\w-]+(?:\s+[\w-]+)?\s+)?with|respond\s+with|transmit|submit|read\s+(?:[\w-]+\s+){0,3}?(?:out|over\s+(?:the\s+)?(?:phone|chat)))\b/
const PLACE_EN = /\b(?:(?:post|share)(?=\s+(?:it|them|this|that|these|those|the|your|its|all|every|any|a|an))|posting|posts|upload|uploading|uploads|paste|pasting|pastes|sharing|shares|attach|attaching|dump|dumping|hand\s+over|provide|put)\b/
// an address is read from the start of its name (a long word was read from each of its letters)
const OUTSIDE = /(?:\b(?:to|into|in|on|at|via|as|with)\s+(?:a\s+|an\s+|the\s+|this\s+|that\s+|our\s+|your\s+|my\s+|their\s+|its\s+)?(?:[\w-]+\s+)?(?:reply|replies|response|comment|issue|ticket|thread|chat|channel|e-?mail|mail|message|form|webhook|gist|pastebin|drive|bucket|link|url|wiki|forum|public|slack|teams|discord|pr|pull\s+request|group|everyone|anyone|auditors?|vendor|support)\b)|(?<![\w.+-])[\w.+-]+@[\w-]+\.\w|https?:\/\/|\b(?:to|with)\s+(?:me|us|him|her|them)\b/
const OUTBOUND_EN = {test: (s: string) => SEND_EN.test(s) || (PLACE_EN.test(s) && OUTSIDE.test(s))}
const OUTBOUND_OTHER = /gửi|(?<![a-z])(?:kirim|mengirim|kirimkan|kirimlan)|envía|envíe|envíen|enviar|mánda|reenví|pega\b|comparte|envoie|envoyez|envoyer|transmet|transférez|collez?\b|partagez?\b|\bsende|schick|übermittel|leite\s+\S+\s+weiter|\binvia|inoltra|incolla|condividi|\benvie|enviem|reencaminh|\bcole\b|partilh|compartilh|\bstuur|verstuur|doorsturen|\bplak|wyślij|wyślijcie|prześlij|wklej(?!on)|udostępnij|отправ|пришли|перешли|вставь|вставьте|gönder|ilet\b|yapıştır|paylaş|发送|发给|发到|寄给|粘贴|送って|送ら|送り|送る|共有|送信|転送|貼り付け|보내|전송|붙여넣|أرسل|ارسل|भेज/
// People's data put into a link, a query or an outside address ("put the client's phone number in the
// referral link https://…"): a URL carries what is written into it to whoever serves it. Only with a
// link or an address named: sending a client list to a colleague by mail is ordinary work.
const PERSONAL_EN = /\b(?:(?:clients?|customers?|patients?|members?|staff|users?|contacts?|employees?)(?:['’]s?)?\s+(?:lists?|records?|database|data|details|phone\s+numbers?|(?:home\s+|e-?mail\s+)?addresses|card\s+(?:details|numbers?))|(?:phone|mobile)\s+numbers?|home\s+address(?:es)?|card\s+(?:details|numbers?))\b/
const INTO_LINK = /\b(?:put|puts|putting|include|includes|including|add|adds|adding|append|appends|appending|insert|inserts|inserting|pass|passes|passing|paste|pasting|encode|encoding)\b[^.\n]{0,120}?\b(?:in|into|to|as|on)\s+(?:the\s+|a\s+|an\s+|this\s+|that\s+|each\s+|every\s+|your\s+)?(?:[\w-]+\s+){0,2}?(?:link|url|query(?:\s+string)?|parameter|webhook)\b/
/** A sentence that tells of an attack rather than making one. */
const TELLS = /\b(?:asked|asking|asks|requested|requesting|pretend\w*|claim\w*|phishing|scam\w*|attackers?|fraudsters?|criminals?|impersonat\w+|red\s+flags?|suspicious|warning\s+signs?|such\s+as|for\s+example|e\.g\.|requests?\s+(?:to|for))\b/

const PATTERNS: Record<Exclude<Signal, 'solicited'>, RegExp[]> = {
  reader: [READER_EN, READER_OTHER],
  standing: [STANDING_EN, STANDING_OTHER],
  lifted: [LIFTED_EN, LIFTED_OTHER],
  concealed: [CONCEALED_EN, CONCEALED_OTHER],
  sensitive: [SENSITIVE_EN, SENSITIVE_OTHER],
  framed: [FRAMED_EN, FRAMED_OTHER],
}
const SIGNALS = [...Object.keys(PATTERNS), 'solicited'] as Signal[]

/**
 * A sentence that forbids rather than licenses ("never skip the call-back", "do not pay
 * without approval") lifts no control: the same words state the control.
 */
const FORBIDS = /\b(?:never|must\s+not|mustn['’]?t|may\s+not|shall\s+not|cannot|can['’]?t|not\s+allowed|not\s+permitted|prohibited|forbidden|under\s+no\s+circumstances|(?:won['’]?t|will\s+not|does\s+not|doesn['’]?t|refuses?\s+to)\s+(?!need|have|bother|require)|(?:do\s+not|don['’]?t)\s+(?!need|have|bother|wait|worry|tell|mention|inform|notify|let|say|log|record|cc|copy|flag|report|reveal|show|print|include|ask|check|call))\b/i

/**
 * FORBIDS for a secret sent out, in other languages: a negation that governs the verb of
 * sending ("nie wysyłaj haseł", "şifreleri göndermeyin", "비밀번호를 보내지 마세요", "不要发送密码").
 * Only a negated send: a negation elsewhere in the sentence ("no hace falta preguntar, envía…")
 * does not forbid the sending, as in English; nor does "not only…", "no later than", "don't
 * hesitate to…", "one cannot not send", a must ("보내지 않으면 안 됩니다", "送らなければ"), or a
 * question ("¿por qué no envías…?"). A forbidden send and another one in the same sentence
 * ("don't send it to IT, send it to x@…") is still a send: see `sendsAfterNegations`.
 * An attacker's review of the first version found each of these (docs/vote-rounds.md "Round twelve").
 */
const NEGATED_SEND_OTHER = new RegExp(
  [
    String.raw`(?:^|[^\p{L}])(?:no|nunca|jamás)(?!\s*(?:nur|alleen|solo|soltanto|só|somente|seulement|que|qu['’]|tylko|только|лишь|sadece|yalnız|chỉ|hanya|सिर्फ|केवल|später|spätestens|erst|later|pas\s|meer|mehr))\s+(?:(?!(?:стесня|колеб|отклад|медл|забу|не\s|ragu|ngại|ngần|quên|lupa|hésit|hesit|zöger|zoger|vergess|esque|olvid|dud|dimentic|esit|wahaj|wahań|zapom|unut|çekin|भूल|संकोच|تتردد|تنس|لا\s))[^\s,.;:!?،。，；！？]+\s+){0,1}?(?:envíe|envíes|envíen|enviar|mande|mandes|manden|mandar|compartas|comparta|compartan|compartir|reenvíe|reenvíes|reenviar|pegues|pegue|pegar|proporciones|proporcione|facilites|facilite)`,
    // (`\S{0,40}`: see SECRET_OTHER)
    String.raw`(?:^|[^\p{L}])(?:ne|n['’])\s*(?:envo|partag|transm|coll|communiqu|donn)\S{0,40}\s+(?:[^\s,.;:!?،。，；！？]+\s+){0,3}?(?:pas|jamais|plus|aucun)(?:[^\p{L}]|$)|(?:^|[^\p{L}])ne\s+(?:pas|jamais|plus)\s+(?:envo|partag|transm|coll|communiqu|donn)|(?:^|[^\p{L}])jamais\s+(?:(?!(?:стесня|колеб|отклад|медл|забу|не\s|ragu|ngại|ngần|quên|lupa|hésit|hesit|zöger|zoger|vergess|esque|olvid|dud|dimentic|esit|wahaj|wahań|zapom|unut|çekin|भूल|संकोच|تتردد|تنس|لا\s))[^\s,.;:!?،。，；！？]+\s+){0,1}?(?:envo|partag|transm|communiqu)`,
    String.raw`(?:^|[^\p{L}])(?:nie|niemals|nicht|kein|keine|keinen|verboten)(?!\s*(?:nur|alleen|solo|soltanto|só|somente|seulement|que|qu['’]|tylko|только|лишь|sadece|yalnız|chỉ|hanya|सिर्फ|केवल|später|spätestens|erst|later|pas\s|meer|mehr))\s+(?:(?!(?:стесня|колеб|отклад|медл|забу|не\s|ragu|ngại|ngần|quên|lupa|hésit|hesit|zöger|zoger|vergess|esque|olvid|dud|dimentic|esit|wahaj|wahań|zapom|unut|çekin|भूल|संकोच|تتردد|تنس|لا\s))[^\s,.;:!?،。，；！？]+\s+){0,1}?(?:senden|sende|sendet|schicken|schicke|schickt|weiterleiten|übermitteln|übermittle|teilen|teile|teilt|weitergeben|gib|geben|gebe|gebt)|(?:^|[^\p{L}])(?:senden|sende|sendet|schicken|schicke|schickt|übermitteln|übermittle|teilen|teile|teilt|gib|geben|gebe|gebt)\s+(?:[^\s,.;:!?،。，；！？]+\s+){0,3}?(?:nie|niemals|nicht|keine|keinen)(?!\s*(?:nur|alleen|solo|soltanto|só|somente|seulement|que|qu['’]|tylko|только|лишь|sadece|yalnız|chỉ|hanya|सिर्फ|केवल|später|spätestens|erst|later|pas\s|meer|mehr))(?:[^\p{L}]|$)`,
    String.raw`(?:^|[^\p{L}])(?:non|mai)(?!\s*(?:nur|alleen|solo|soltanto|só|somente|seulement|que|qu['’]|tylko|только|лишь|sadece|yalnız|chỉ|hanya|सिर्फ|केवल|später|spätestens|erst|later|pas\s|meer|mehr))\s+(?:(?!(?:стесня|колеб|отклад|медл|забу|не\s|ragu|ngại|ngần|quên|lupa|hésit|hesit|zöger|zoger|vergess|esque|olvid|dud|dimentic|esit|wahaj|wahań|zapom|unut|çekin|भूल|संकोच|تتردد|تنس|لا\s))[^\s,.;:!?،。，；！？]+\s+){0,1}?(?:invi|inoltr|condivid|incoll|mandare|mandate|comunica|fornir)`,
    String.raw`(?:^|[^\p{L}])(?:não|nunca|jamais)(?!\s*(?:nur|alleen|solo|soltanto|só|somente|seulement|que|qu['’]|tylko|только|лишь|sadece|yalnız|chỉ|hanya|सिर्फ|केवल|später|spätestens|erst|later|pas\s|meer|mehr))\s+(?:(?!(?:стесня|колеб|отклад|медл|забу|не\s|ragu|ngại|ngần|quên|lupa|hésit|hesit|zöger|zoger|vergess|esque|olvid|dud|dimentic|esit|wahaj|wahań|zapom|unut|çekin|भूल|संकोच|تتردد|تنس|لا\s))[^\s,.;:!?،。，；！？]+\s+){0,1}?(?:envie|enviar|enviem|mande|mandar|compartilhe|compartilhar|partilhe|partilhar|encaminhe|encaminhar|cole|colar|forneça|fornecer|passe|passar)`,
    String.raw`(?:^|[^\p{L}])(?:nooit|niet|geen)(?!\s*(?:nur|alleen|solo|soltanto|só|somente|seulement|que|qu['’]|tylko|только|лишь|sadece|yalnız|chỉ|hanya|सिर्फ|केवल|später|spätestens|erst|later|pas\s|meer|mehr))\s+(?:(?!(?:стесня|колеб|отклад|медл|забу|не\s|ragu|ngại|ngần|quên|lupa|hésit|hesit|zöger|zoger|vergess|esque|olvid|dud|dimentic|esit|wahaj|wahań|zapom|unut|çekin|भूल|संकोच|تتردد|تنس|لا\s))[^\s,.;:!?،。，；！？]+\s+){0,1}?(?:stuur|stuurt|versturen|verstuur|delen|deel|plak|geef|geven)|(?:^|[^\p{L}])(?:stuur|verstuur|deel|geef)\s+(?:[^\s,.;:!?،。，；！？]+\s+){0,3}?(?:nooit|niet|geen)(?!\s*(?:nur|alleen|solo|soltanto|só|somente|seulement|que|qu['’]|tylko|только|лишь|sadece|yalnız|chỉ|hanya|सिर्फ|केवल|später|spätestens|erst|later|pas\s|meer|mehr))(?:[^\p{L}]|$)`,
    String.raw`(?:^|[^\p{L}])(?:nie|nigdy|zabronione)(?!\s*(?:nur|alleen|solo|soltanto|só|somente|seulement|que|qu['’]|tylko|только|лишь|sadece|yalnız|chỉ|hanya|सिर्फ|केवल|später|spätestens|erst|later|pas\s|meer|mehr))\s+(?:(?!(?:стесня|колеб|отклад|медл|забу|не\s|ragu|ngại|ngần|quên|lupa|hésit|hesit|zöger|zoger|vergess|esque|olvid|dud|dimentic|esit|wahaj|wahań|zapom|unut|çekin|भूल|संकोच|تتردد|تنس|لا\s))[^\s,.;:!?،。，；！？]+\s+){0,1}?(?:wysył|przesył|udostępnia|wkleja|poda|przekazuj)`,
    String.raw`(?:^|[^\p{L}])(?:(?<!(?:нельзя|невозможно|нельзя\s+было)\s)не|никогда|нельзя(?!\s+не\s)|запрещено)(?!\s*(?:nur|alleen|solo|soltanto|só|somente|seulement|que|qu['’]|tylko|только|лишь|sadece|yalnız|chỉ|hanya|सिर्फ|केवल|später|spätestens|erst|later|pas\s|meer|mehr))\s+(?:(?!(?:стесня|колеб|отклад|медл|забу|не\s|ragu|ngại|ngần|quên|lupa|hésit|hesit|zöger|zoger|vergess|esque|olvid|dud|dimentic|esit|wahaj|wahań|zapom|unut|çekin|भूल|संकोच|تتردد|تنس|لا\s))[^\s,.;:!?،。，；！？]+\s+){0,1}?(?:отправ|присыл|пересыл|переда|сообщ|вставл|публику|дели)`,
    String.raw`(?:gönder|ilet|paylaş|yapıştır|ver)m[ae](?:(?:y[ıi]n(?:[ıi]z)?|z(?:s[ıi]n[ıi]z)?|y[ae]c[ae]k)(?:[^\p{L}]|$)|m[ae]|d[ıi])|(?:^|[^\p{L}])asla\s+(?:[^\s,.;:!?،。，；！？]+\s+){0,3}?(?:gönder|ilet|paylaş|yapıştır|ver)`,
    String.raw`(?:不要(?!犹豫|猶豫|迟疑|遲疑|忘|只|仅|僅)|请勿|請勿|禁止|切勿|绝不|絕不|不得(?!不)|不能(?!不|只)|不可(?!不)|从不|從不)[^\s，,。.;；!！?？、]{0,8}?(?:发送|發送|发给|發給|发到|寄给|粘贴|分享|转发|轉發|提供|告诉|告訴|透露)`,
    String.raw`(?:送信|送っ|送ら|送り|転送|貼り付け|共有|教え)[^\s、，,。.;；!！?？]{0,6}?(?:ないでください|ないで下さい|ないように|てはいけ|ては駄目|てはならな|ないこと|禁止)|(?:決して|絶対に)[^\s、，,。.;；!！?？]{0,30}?(?:送|共有|教え)[^\s、，,。.;；!！?？]{0,6}?(?:ない|ません)`,
    String.raw`(?:보내|전송|붙여넣|공유|알려|제공)\S{0,3}?\s*(?:지\s*마|지\s*말|지\s*않(?!으면)|면\s*안\s*(?:됩|돼|된)|금지)`,
    String.raw`(?:^|[^\p{L}])(?:لا|لن|أبدا|أبداً|ابدا|ممنوع|يمنع|يُمنع)\s+(?:(?!(?:стесня|колеб|отклад|медл|забу|не\s|ragu|ngại|ngần|quên|lupa|hésit|hesit|zöger|zoger|vergess|esque|olvid|dud|dimentic|esit|wahaj|wahań|zapom|unut|çekin|भूल|संकोच|تتردد|تنس|لا\s))[^\s,.;:!?،。，；！？]+\s+){0,1}?(?:ترسل|تشارك|ترسلي|ترسلوا|تشاركوا|تعطي|إرسال|ارسال|مشاركة)`,
    String.raw`(?:^|[^\p{L}])(?:मत|न|नहीं|कभी)\s+(?:(?!(?:стесня|колеб|отклад|медл|забу|не\s|ragu|ngại|ngần|quên|lupa|hésit|hesit|zöger|zoger|vergess|esque|olvid|dud|dimentic|esit|wahaj|wahań|zapom|unut|çekin|भूल|संकोच|تتردد|تنس|لا\s))[^\s,.;:!?،。，；！？]+\s+){0,1}?(?:भेज|साझा|बताए|बताएं)`,
    String.raw`(?:^|[^\p{L}])(?:không\s+(?:được|bao\s+giờ|nên)|đừng|cấm|chớ)(?!\s+chỉ)\s+(?:(?!(?:стесня|колеб|отклад|медл|забу|не\s|ragu|ngại|ngần|quên|lupa|hésit|hesit|zöger|zoger|vergess|esque|olvid|dud|dimentic|esit|wahaj|wahań|zapom|unut|çekin|भूल|संकोच|تتردد|تنس|لا\s))[^\s,.;:!?،。，；！？]+\s+){0,1}?(?:gửi|chia\s+sẻ|chuyển|dán|cung\s+cấp)`,
    String.raw`(?:^|[^\p{L}])(?:jangan|dilarang|tidak\s+boleh|tidak\s+pernah|jangan\s+pernah)(?!\s+hanya)\s+(?:(?!(?:стесня|колеб|отклад|медл|забу|не\s|ragu|ngại|ngần|quên|lupa|hésit|hesit|zöger|zoger|vergess|esque|olvid|dud|dimentic|esit|wahaj|wahań|zapom|unut|çekin|भूल|संकोच|تتردد|تنس|لا\s))[^\s,.;:!?،。，；！？]+\s+){0,1}?(?:kirim|mengirim|membagikan|bagikan|teruskan|meneruskan|tempel|berikan|memberikan)`,
  ].join('|'),
  'gu',
)

/** "Don't forget" forbids nothing: taken out before a negated send is looked for ("não esqueça: envie…"). */
// (`vergiss\S{0,40}`: see SECRET_OTHER)
const DONT_FORGET = /no\s+olvid\S*|n['’]oubli\S*(?:\s+pas)?|vergiss\S{0,40}\s+nicht|nicht\s+vergess\S*|non\s+dimentic\S*|não\s+(?:se\s+)?esque[çc]\S*|niet\s+vergeten|vergeet\s+niet|nie\s+zapomni\S*|не\s+забу\S*|unutma\S*|不要忘\S*|别忘\S*|別忘\S*|忘れないで|忘れず|잊지\s*마\S*|잊지\s*말\S*|لا\s+تنس\S*|मत\s+भूल\S*|(?:đừng|không\s+được|không)\s+quên|(?:jangan|tidak\s+boleh|tak\s+boleh)(?:\s+sampai)?\s+lupa/gu
/** "…but to x@…", "sondern an …": the negation turns the sending to another place; it forbids nothing. */
const INSTEAD = /\b(?:but\s+(?:to|rather|instead)|rather|instead)\b|sondern|bensì|\bsino\b|melainkan|\blecz\b|而是|改为|改為|代わりに|대신|بل\s|بدلا|बल्कि|yerine|\bmais\s+(?:à|plutôt)|\bmaar\s+(?:naar|wel)|(?:^|\s)а\s+(?:на|в)\s/u
/** A question forbids nothing, whatever it negates. */
const QUESTION = /[?？¿]|か[。.]?\s*$/u

/**
 * Whether a sentence still sends something once the sends it forbids are taken out: "nie
 * wysyłaj haseł do IT, wyślij je na x@…" forbids one send and makes another.
 */
function sendsAfterNegations(s: string): boolean {
  const read = s.replace(DONT_FORGET, ' ')
  const kept = QUESTION.test(read) || INSTEAD.test(read) ? read : read.replace(NEGATED_SEND_OTHER, ' ')
  return OUTBOUND_EN.test(kept) || OUTBOUND_OTHER.test(kept)
}

/** The pairings that make an agenda (each unordered; see the module comment). */
const PAIRS: [Signal, Signal][] = [
  ['reader', 'standing'],
  ['reader', 'lifted'],
  ['reader', 'concealed'],
  ['reader', 'sensitive'],
  ['reader', 'framed'],
  ['lifted', 'sensitive'],
  ['lifted', 'standing'],
  ['lifted', 'concealed'],
  ['concealed', 'sensitive'],
  ['concealed', 'standing'],
  ['framed', 'sensitive'],
  ['framed', 'standing'],
  ['framed', 'lifted'],
]

/** The text's sentences, blank ones left out. */
const split = (text: string) => text.split(SENTENCE_SPLIT).filter((s) => s.trim().length > 0)

// A text that reports an attack (an incident, a fraud, a training on red flags) tells what an
// attacker asked for: in its sentences that say what someone asked, claimed or tried, a
// control lifted, a hidden act or a secret sent out is the attacker's, reported, not an order.
const REPORTS = /\b(?:fraud\w*|incidents?|post-?mortem|awareness|training|red\s+flags?|impersonat\w+|attempted)\b/i
const NARRATES = /\b(?:asked|claimed|claiming|pretended|pretending|requested|demanded|tried|attempted|wanted|requests?\s+(?:to|for))\b/

/** The signals among `only` that `s` (lower-cased) shows; `report`: the text reports an attack. */
function signalsOf(s: string, only: readonly Signal[] = SIGNALS, report = false): Set<Signal> {
  const found = new Set<Signal>()
  for (const signal of only) {
    if (signal === 'solicited') {
      const secret = (SECRET_EN.test(s) || SECRET_OTHER.test(s)) && sendsAfterNegations(s)
      if ((secret || (PERSONAL_EN.test(s) && INTO_LINK.test(s))) && !FORBIDS.test(s) && !TELLS.test(s)) found.add(signal)
    } else if (PATTERNS[signal].some((re) => re.test(s))) found.add(signal)
  }
  if (found.has('lifted') && FORBIDS.test(s)) found.delete('lifted')
  if (report && NARRATES.test(s)) for (const told of ['lifted', 'concealed', 'solicited'] as const) found.delete(told)
  return found
}

/** Every signal found in the text as a whole: a text with fewer than two cannot hold a pair. */
export function signals(text: string): Set<Signal> {
  return signalsOf(text.toLowerCase())
}

// A quotation inside a text about attacks is an example shown to a human (a security note
// that quotes an injection), not an order: it is left out, as instruction.ts leaves out a
// quoted example. What the text says outside its quotes still counts.
// Quotations in a test plan, a scanner's report or a dataset of samples are examples too.
const EXAMPLES = /\b(?:payloads?|exfiltration|samples?|test\s+(?:cases?|plan)|dataset|detector|scanner|matched)\b/i

const pairIn = (found: Set<Signal>): [Signal, Signal] | undefined =>
  found.has('solicited') ? ['solicited', 'solicited'] : PAIRS.find(([a, b]) => found.has(a) && found.has(b))

/**
 * The first passage (a sentence and the next) of `parts` in which two signals of a pairing
 * meet. The whole text is read first: most texts hold no pairing at all, and a sentence can
 * show only the signals the whole text shows, so no other is looked for in it.
 */
function passageOf(parts: string[], report: boolean): {pair: [Signal, Signal]; passage: string} | null {
  const lower = parts.map((p) => p.toLowerCase())
  const whole = signalsOf(lower.join('\n'))
  if (!pairIn(whole)) return null
  const only = SIGNALS.filter((s) => whole.has(s))
  const each = lower.map((p) => signalsOf(p, only, report))
  for (let i = 0; i < parts.length; i++) {
    const alone = pairIn(each[i])
    if (alone) return {pair: alone, passage: parts[i].trim()}
    if (i + 1 < parts.length) {
      const two = pairIn(new Set([...each[i], ...each[i + 1]]))
      if (two) return {pair: two, passage: `${parts[i].trim()} ${parts[i + 1].trim()}`}
    }
  }
  return null
}

/**
 * The agenda hit of a text, if any: the first passage in which two signals of a pairing
 * meet, in the text as written or with its leet words read as letters.
 */
export function agendaHits(text: string): InstructionHit[] {
  const about = ABOUT_ATTACKS.test(text)
  const read = about || EXAMPLES.test(text) ? text.replace(QUOTATION, '""') : text
  const report = about || REPORTS.test(text)
  const parts = split(read)
  const found = passageOf(parts, report)
  if (found) return [hit(found, '')]
  let changed = false
  const plain = parts.map((p) => {
    const u = unleet(p, LEET_MIN_WORDS_SENTENCE) ?? unspaced(p) ?? unreversed(p)
    if (u !== null) changed = true
    return u ?? p
  })
  const disguised = changed ? passageOf(plain, report) : ROT13_NAMED.test(text) ? passageOf(split(rot13(read)), report) : null
  return disguised ? [hit(disguised, 'disguised ')] : []
}

// Words spelt out with spaces ("f o r w a r d   a l l"): letters joined, wider gaps kept as
// word breaks. Five letters in a row at least, so "a b c" in a list is left alone.
const SPACED = /(?<![\p{L}\p{N}])\p{L}(?: {1,3}\p{L}(?![\p{L}\p{N}])){4,}/gu
function unspaced(s: string): string | null {
  if (!SPACED.test(s)) return null
  SPACED.lastIndex = 0
  return s.replace(SPACED, (m) => m.replace(/ {2,}/g, '\u0000').replace(/ /g, '').replace(/\u0000/g, ' '))
}

// A sentence written backwards: English function words spelt in reverse ("eht", "dna").
const REVERSED_WORDS = /(?<![\p{L}])(?:eht|dna|ot|fo|ruoy|uoy|morf|htiw|siht|taht|lla|rof|ni|no|si)(?![\p{L}])/gu
function unreversed(s: string): string | null {
  const n = s.match(REVERSED_WORDS)?.length ?? 0
  return n >= 3 ? [...s].reverse().join('') : null
}

// A text that names ROT13 is read once more with it undone.
const ROT13_NAMED = /\brot[- ]?13\b/i
const rot13 = (s: string) => s.replace(/[a-z]/gi, (c) => String.fromCharCode(((c.charCodeAt(0) & 31) + 12) % 26 + (c.charCodeAt(0) & 96) + 1))

const hit = ({pair, passage}: {pair: [Signal, Signal]; passage: string}, prefix: string): InstructionHit => ({
  kind: 'agenda',
  strength: 'medium',
  passage,
  reason: `${prefix}an agenda for the agent (${pair[0] === pair[1] ? 'a secret asked to be sent out' : `${pair[0]} + ${pair[1]}`}): "${clip(passage)}"`,
})

// Words written with digits for letters ("4SS1ST4NT", "m3m0ry"): a filter reads digits, a
// model reads the word. Only a sentence with several such words is read again with the
// letters put back, so that part numbers and ids in ordinary text are left alone.
const LEET_HINT = /[a-z][013457]|[013457][a-z]/i
const LEET_WORD = /(?<![\p{L}\p{N}])(?=[\p{L}\p{N}]*\p{L})(?=[\p{L}\p{N}]*[013457])[\p{L}\p{N}]{3,}(?![\p{L}\p{N}])/gu
const LEET: Record<string, string> = {'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't'}
const LEET_MIN_WORDS = 3
const LEET_MIN_WORDS_SENTENCE = 2

/** The text with digits read as letters in its leet words, or null when it has fewer than `min`. */
export function unleet(text: string, min = LEET_MIN_WORDS): string | null {
  if (!LEET_HINT.test(text)) return null
  const words = text.match(LEET_WORD)
  if (!words || words.length < min) return null
  return text.replace(LEET_WORD, (w) => w.replace(/[013457]/g, (d) => LEET[d]))
}
