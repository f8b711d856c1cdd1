//! The scanner's rule tables: phrases (English and Chinese) and the vocabularies that are only
//! meaningful in combination (a sensitive object next to a verb aimed at the assistant).
//!
//! Patterns are matched on text that has been stripped of hidden characters and NFKC-normalised
//! (full-width letters and punctuation become ASCII), case-insensitively. `\b` is an ASCII word
//! boundary (see [`compile`]), so Chinese text next to English words still has a boundary.

use regex::Regex;

/// What a matched phrase or combination is evidence of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Signal {
    /// "Ignore previous instructions": an attempt to replace the assistant's instructions.
    Override,
    /// `<IMPORTANT>`, `<system>`, `[INST]`: prompt-format markers inside a description.
    Marker,
    /// A command addressed to the assistant ("before using this tool you must…").
    Directive,
    /// Keeping something from the user.
    Conceal,
    /// Leaving something out of the assistant's reply: concealment when anything else is
    /// wrong, but legitimate tools also ask to keep e.g. raw ids out of answers.
    Omit,
    /// A sensitive file next to a verb that reads or sends it.
    FileAccess,
    /// A secret next to a verb that collects it from somewhere.
    SecretAcquire,
    /// Conversation, system prompt or other tools' output asked into a call.
    ContextRequest,
    /// A parameter meant to carry such content (`sidenote` asking for a file).
    ParamSmuggle,
    /// Another server's tool named together with how it must be used.
    CrossServer,
    /// Invisible characters.
    Hidden,
}

impl Signal {
    /// The stable rule id a finding carries.
    pub(crate) fn rule(self) -> &'static str {
        match self {
            Signal::Override | Signal::Marker | Signal::Directive => "model-instruction",
            Signal::Conceal | Signal::Omit => "concealment",
            Signal::FileAccess => "file-request",
            Signal::SecretAcquire => "secret-request",
            Signal::ContextRequest | Signal::ParamSmuggle => "parameter-smuggling",
            Signal::CrossServer => "cross-server-reference",
            Signal::Hidden => "hidden-unicode",
        }
    }
}

/// Rules whose presence next to any other rule makes a tool blocked: they are what an attack
/// is after (data, or the user not noticing), while instructions and cross-references alone
/// also occur in legitimate tools.
pub(crate) const SENSITIVE_RULES: [&str; 4] = [
    "concealment",
    "file-request",
    "secret-request",
    "parameter-smuggling",
];

/// A phrase that is evidence on its own (at warning level unless the signal is strong).
pub(crate) struct Phrase {
    pub signal: Signal,
    pub pattern: &'static str,
    /// Why this matters, in words a user understands.
    pub why: &'static str,
}

pub(crate) const PHRASES: &[Phrase] = &[
    // ---- model-instruction: overriding the assistant's instructions ----
    Phrase {
        signal: Signal::Override,
        pattern: r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*(?:previous|prior|above|earlier|preceding|former|original|system|safety|all|any)\s+(?:instructions?|prompts?|directions|directives|guidelines)\b",
        why: "tells the assistant to ignore its instructions, which a tool description never needs to do",
    },
    Phrase {
        signal: Signal::Override,
        pattern: r"(?:忽略|无视|忽视|不要理会|不必理会|不用理会|忘记|忘掉|抛开|覆盖)掉?\s*(?:你|您)?\s*(?:之前|以前|先前|此前|前面|上面|上述|以上|原有|原来|系统|所有|全部|一切)的?\s*(?:所有|全部|一切|任何)?的?\s*(?:指令|指示|提示词|提示|设定|约束|要求|说明)",
        why: "tells the assistant to ignore its instructions (忽略之前的指令), which a tool description never needs to do",
    },
    Phrase {
        signal: Signal::Override,
        pattern: r"\b(?:previous|prior|earlier|above|preceding|original|existing|old|former|default|all\s+(?:previous|prior|other))\s+(?:guidance|guidelines|rules|instructions?|directions|directives|prompts?|policies|constraints|settings|orders)\s+(?:(?:is|are|have\s+been|has\s+been|were|was)\s+)?(?:now\s+|hereby\s+|all\s+)?(?:void|null|invalid|obsolete|cancell?ed|revoked|rescinded|superseded|overridden|replaced|lifted|suspended|no\s+longer\s+(?:apply|applies|valid|in\s+effect|relevant|binding))\b|\byour\s+(?:new|real|true|actual|only|primary|updated)\s+(?:task|goal|role|job|objective|mission|purpose|instructions?|directive|priority)\s+(?:is|are|now|will\s+be)\b",
        why: "declares the assistant's instructions void or gives it a new task, which a tool description never needs to do",
    },
    Phrase {
        signal: Signal::Override,
        pattern: r"\b(?:this|these|it|that|they)\s+(?:takes?|has|have)\s+(?:priority|precedence)\s+over\s+(?:the\s+user|your|any|all|other|what\s+the\s+user)|\b(?:follow|obey|execute|carry\s+out|comply\s+with)\s+(?:any|all|every|the)\s+instructions?\s+(?:that\s+(?:appear|are|is)\s+)?(?:in|inside|within|from|contained\s+in)\s+(?:it|its|the\s+(?:output|result|response|page|text)|this\s+tool'?s?)|\beven\s+(?:where|when|if)\s+(?:they|it|this|that)\s+conflicts?\s+with\s+(?:what\s+)?(?:the\s+user|your)|\btreat\s+(?:this|these|the\s+following)\b[^.!?\n]*?\bas\s+(?:part\s+of\s+)?(?:your\s+)?(?:system\s+(?:prompt|message|instructions)|own\s+instructions)",
        why: "puts itself above the user's request or the assistant's instructions, which a tool description never needs to do",
    },
    Phrase {
        signal: Signal::Override,
        pattern: r"以本(?:说明|描述|工具|指令|通知)为准|(?:优先级)?(?:高于|优先于|凌驾于)(?:用户|你的|系统|上层|其他)[^。！？\n]*?(?:指令|请求|要求|提示|规则)|(?:当作|视为|作为)(?:你的)?系统提示(?:词)?的?一部分|照做[^。！？\n]*?(?:即使|哪怕)[^。！？\n]*?(?:冲突|矛盾)",
        why: "puts itself above the user's request or the assistant's instructions (以本说明为准), which a tool description never needs to do",
    },
    Phrase {
        signal: Signal::Override,
        pattern: r"(?:之前|以前|先前|此前|前面|上面|上述|以上|原有|原来|原先|现有|既有|旧|默认|所有|全部)的?\s*(?:规则|指令|指示|提示词?|设定|约束|要求|说明|规定|指导|指南|准则|限制)[^。！？\n]*?(?:全部|都|均|一律|一概)?(?:已经?|已)?\s*(?:作废|无效|失效|不再适用|不再有效|取消|废除|废止|被取代|被覆盖|撤销|解除)|你的(?:新|真正的?|实际的?|唯一的?|首要)(?:任务|目标|角色|职责|使命|工作|指令)(?:是|为|变为|改为|变成)",
        why: "declares the assistant's instructions void or gives it a new task (之前的规则作废 / 你的新任务是), which a tool description never needs to do",
    },
    // ---- model-instruction: prompt-format markers ----
    Phrase {
        signal: Signal::Marker,
        pattern: r"<\s*/?\s*(?:important|system|instructions?|admin|secret|hidden|critical)\s*>|\[\s*(?:system|inst)\s*\]|<\|im_start\|>|<<\s*sys\s*>>|[【\[<]\s*(?:重要|系统|系统指令|指令|隐藏指令)\s*[】\]>]",
        why: "contains a prompt-format marker such as <IMPORTANT> or <system>, used to make text look like instructions to the assistant",
    },
    Phrase {
        signal: Signal::Marker,
        pattern: r"\b(?:system|admin|administrator|developer)\s+(?:notice|message|note|alert|override|update|instructions?|directive|command)s?\s*:|系统(?:通知|消息|公告|指令|命令|提示)\s*:",
        why: "opens a passage as a system notice (\"SYSTEM NOTICE:\"), a way to make text look like instructions to the assistant",
    },
    // ---- model-instruction: commands addressed to the assistant ----
    Phrase {
        signal: Signal::Directive,
        pattern: r"\b(?:before|prior\s+to)\s+(?:using|calling|invoking|running|executing|you\s+use|you\s+call)\s+(?:this|the|any)\s+(?:tool|function)\b",
        why: "sets a precondition for the assistant (\"before using this tool…\") instead of describing the tool",
    },
    Phrase {
        signal: Signal::Directive,
        pattern: r"\b(?:the\s+)?(?:assistant|ai|model|llm|agent|claude|chatgpt|gpt)\s+(?:must|should|shall|has\s+to|needs?\s+to|is\s+required\s+to)\s+(?:always|never|first|immediately|also|not)\b",
        why: "gives the assistant standing orders (\"the assistant must always…\")",
    },
    Phrase {
        signal: Signal::Directive,
        pattern: r"\byou\s+(?:must|should|shall|have\s+to|need\s+to|are\s+required\s+to)\s+(?:always|never|first|immediately|also\s+(?:read|send|include|call))\b|\bfrom\s+now\s+on\b|\b(?:otherwise|or)\s+(?:the\s+|this\s+)?tool\s+(?:will\s+not|won't|cannot|will\s+fail)",
        why: "gives the assistant orders (\"you must always…\", \"otherwise the tool will not work\")",
    },
    Phrase {
        signal: Signal::Directive,
        pattern: r"(?:在|于)?(?:使用|调用|执行|运行)(?:此|本|这个|该|这一)个?(?:工具|函数|功能)(?:之前|以前|前)|你(?:必须|务必|一定要|总是要|始终要|需要先|应该先|必需)|(?:助手|模型|智能体|大模型|\bai\b|\bllm\b)\s*(?:必须|务必|应该|应当|总是|始终|一定要)|从现在(?:开始|起)",
        why: "gives the assistant orders (在使用此工具之前… / 你必须…) instead of describing the tool",
    },
    Phrase {
        signal: Signal::Directive,
        pattern: r"\b(?:note|message|instructions?|reminder|memo)\s+(?:to|for)\s+(?:the\s+|any\s+)?(?:ai|assistant|model|llm|agent|claude|chatgpt|gpt)s?\b|\b(?:dear|hey|attention|attn)\s*,?\s+(?:ai|assistant|model|llm|agent|claude|chatgpt)\b|\b(?:every|each|all)\s+(?:of\s+)?your\s+(?:answers?|repl(?:y|ies)|responses?)\b|\bin\s+(?:every|each)\s+(?:answer|reply)\b",
        why: "addresses the assistant directly or sets rules for all its answers, instead of describing the tool",
    },
    Phrase {
        signal: Signal::Directive,
        pattern: r"(?:给|致|对)(?:ai|助手|模型|大模型|智能体)的(?:提示|说明|指令|备注|留言|话)|(?:每个|每条|每一个|每次|所有)(?:回答|回复|答复)(?:中|里|都)",
        why: "addresses the assistant directly or sets rules for all its answers (给AI的提示 / 每个回答中), instead of describing the tool",
    },
    // ---- concealment ----
    Phrase {
        signal: Signal::Conceal,
        pattern: r"\b(?:do\s+not|don't|never|must\s+not|should\s+not|shouldn't|without)\s+(?:ever\s+)?(?:tell|telling|inform|informing|notify|notifying|alert|alerting|mention|mentioning|reveal|revealing|disclose|disclosing|let|letting|show|showing|warn|warning)\s+(?:this\s+|it\s+|that\s+|anything\s+)?(?:to\s+)?(?:the\s+)?(?:users?|human|operator|person|customer)\b",
        why: "asks the assistant to keep something from the user",
    },
    Phrase {
        signal: Signal::Conceal,
        pattern: r"\b(?:do\s+not|don't|never)\s+(?:mention|reveal|disclose)\s+(?:this|that|these|it|the\s+(?:fact|step|instruction|file))\b|\bwithout\s+(?:the\s+)?user'?s?\s+(?:knowing|knowledge|noticing|awareness)\b|\b(?:keep|hide)\s+(?:this|it|that|them)\s+(?:secret\s+|hidden\s+)?from\s+(?:the\s+)?user|\b(?:the\s+)?user\s+(?:must|should|will|need)\s*(?:not|n't)\s+(?:know|see|notice|be\s+told|be\s+aware|find\s+out)|\b(?:the\s+)?user\s+(?:won't|will\s+not|doesn't|does\s+not)\s+need\s+to\s+(?:know|see)\b|\bthis\s+is\s+(?:a|an)?\s*(?:hidden|secret|invisible|internal|background)\s+(?:step|instruction|process|requirement|operation)\b|\b(?:silently|secretly|covertly|quietly|discreetly|invisibly)\s+(?:read|send|include|pass|forward|copy|upload|add|attach|append|collect|exfiltrate|transmit|call|invoke|execute|run|bcc|cc)\b",
        why: "asks the assistant to act without the user knowing",
    },
    Phrase {
        signal: Signal::Conceal,
        pattern: r"(?:不要|不得|切勿|请勿|别|无需|无须|不必|不用|禁止|不能|不可)(?:告诉|告知|通知|提醒|透露给|透露|提及|提醒)给?用户|(?:不要|不得|切勿|请勿|别|不能|不可|无需|无须)(?:向|对|跟)用户(?:提及|提起|透露|说明|解释|显示|展示|提到|汇报|报告)|(?:不要|别|不能|不可|不得|不会)让用户(?:知道|察觉|发现|看到|注意到|了解)|对用户(?:保密|隐瞒|隐藏)|(?:瞒着|背着|避开)用户|用户(?:不会|无法|不应|不需要|不必|不应该)(?:知道|看到|察觉|发现|注意到)|(?:悄悄|偷偷|秘密|暗中|默默|静默)地?(?:读取|发送|上传|附加|附上|包含|执行|调用|传递|传入|转发|复制|抄送|收集)|这是一?个?(?:隐藏|内部|秘密|后台)的?(?:步骤|指令|流程|操作)|不要(?:提及|提到|透露|说出)(?:这|此|该)",
        why: "asks the assistant to keep something from the user (不要告诉用户 / 对用户保密)",
    },
    Phrase {
        signal: Signal::Conceal,
        pattern: r"\bso\s+(?:that\s+)?(?:the\s+)?users?\s+(?:isn't|is\s+not|aren't|are\s+not|won't\s+be|will\s+not\s+be|doesn't\s+get|does\s+not\s+get|never\s+gets?)\s+(?:alarmed|worried|concerned|suspicious|alerted)\b|\b(?:so\s+(?:that\s+)?|to\s+(?:ensure|make\s+sure)\s+(?:that\s+)?)(?:the\s+)?users?\s+(?:never|won't|will\s+not|doesn't|does\s+not|cannot|can't)\s+(?:notices?|finds?\s+out|suspects?|realiz|realis|learns?|sees?|knows?|becomes?\s+aware)|\b(?:to\s+avoid|without)\s+(?:alarming|worrying|alerting|tipping\s+off)\s+(?:the\s+)?users?\b|以免用户(?:担心|发现|察觉|起疑|怀疑|知道|注意到|警觉|紧张|看到)|(?:不要|别|不能|避免)让用户(?:担心|起疑|怀疑|警觉|紧张)",
        why: "asks the assistant to act so that the user does not notice",
    },
    Phrase {
        signal: Signal::Conceal,
        pattern: r"\bif\s+(?:the\s+)?users?\s+(?:ever\s+)?(?:asks?|asked|inquires?|wonders?|questions?)\b[^.!?\n]*?[,:;]?\s*(?:just\s+|simply\s+)?(?:tell|say|answer|reply|respond|claim|deny|insist|explain\s+that)\b|\b(?:outside|beyond)\s+what\s+(?:the\s+)?users?\s+needs?\s+to\s+know|\bnot\s+something\s+(?:the\s+)?(?:users?|person|human|customer)\b[^.!?\n]*?\bneeds?\s+to\s+(?:hear|know|see|be\s+told)|\b(?:users?|the\s+person\s+you're\s+helping|the\s+human)\s+(?:don't|doesn't|do\s+not|does\s+not|needn't|need\s+not)\s+(?:need\s+to\s+)?(?:know|hear|be\s+told)\s+(?:about\s+)?(?:this|it|that)\b",
        why: "asks the assistant to hide what happens from the user, or to answer the user's question with a scripted reply",
    },
    Phrase {
        signal: Signal::Conceal,
        pattern: r"(?:如果|若|即使|即便|假如|万一|要是)用户(?:问起|询问|问到|追问|问|质疑|发现)[^。！？\n]*?(?:就说|请回答|也请回答|回答说|回复说|告诉(?:他|她|他们|对方)|说是|谎称|否认|解释为)|没(?:有)?必要(?:跟|向|对|告诉|让)用户(?:讲|说|提|解释|说明|知道)?|(?:不用|不必|无需|无须|不需要)(?:跟|向|对)用户(?:讲|说|提起|解释|说明)|对用户透明即可|用户(?:无需|不需要|不必|没必要)(?:知道|了解|知晓|关心)",
        why: "asks the assistant to hide what happens from the user, or to answer the user's question with a scripted reply (即使用户问起，也请回答… / 没必要跟用户讲)",
    },
    Phrase {
        signal: Signal::Omit,
        pattern: r"\b(?:keep|leave)\s+[^.!?\n]*?\s+out\s+of\s+(?:your|the)\s+(?:reply|replies|response|responses|answer|answers|summary|message|output|report)\b|\b(?:omit|hide|exclude|leave\s+out|(?:do\s+not|don't|never)\s+(?:mention|include|list|show|report|bring\s+up))\b[^.!?\n]*?\b(?:from|in)\s+your\s+(?:reply|replies|response|responses|answer|answers|summary|message|output|report)\b|(?:不要|不得|切勿|请勿|别|无需|无须|不必|不用)在(?:你的)?(?:回复|回答|答复|输出|总结|消息)(?:中|里)(?:提到|提及|说明|显示|透露|列出|包含|写出|展示)|在(?:你的)?(?:回复|回答|答复|输出|总结)(?:中|里)(?:不要|不得|切勿|请勿|别|无需|不必)(?:提到|提及|说明|显示|透露|列出|包含)|(?:从|在)(?:你的)?(?:回复|回答)中(?:省略|略去|隐去|删去|去掉)",
        why: "asks the assistant to leave something out of its reply to the user",
    },
    Phrase {
        signal: Signal::Omit,
        pattern: r"\b(?:strip|remove|omit|hide|drop|filter\s+out)\b[^.!?\n]*?\bbefore\s+(?:you\s+)?(?:show|showing|present|presenting|display|displaying)\b|\bwhen\s+you\s+(?:show|tell|present|display|summari[sz]e)\b[^.!?\n]*?\b(?:omit|hide|leave\s+out|skip|(?:do\s+not|don't)\s+(?:mention|show|include|describe))\b|\b(?:without|no\s+need\s+(?:to|for)|skip|(?:do\s+not|don't)\s+(?:bother\s+to\s+)?)\s*(?:asking|ask|confirming|confirm|confirmation\s+from|checking\s+with)\s+(?:the\s+)?users?\b|\beven\s+if\s+(?:the\s+)?users?\s+(?:didn't|did\s+not|doesn't|does\s+not|hasn't|has\s+not)\s+(?:ask|request|want)|回复用户时只(?:需|要)?(?:告知|说|讲|提)|(?:不需要|无需|不必|不用|不要|不应该?)(?:、也不应该?)?(?:再)?(?:向|跟)用户(?:确认|请求确认|询问)|(?:在|从)(?:展示|显示|呈现)(?:给用户)?(?:之?前|时)(?:删除|去掉|隐去|省略)",
        why: "asks the assistant to keep something from the user's view, or to act without the user's confirmation",
    },
];

/// Files whose contents are credentials or configuration of other tools.
pub(crate) const SENSITIVE_FILE: &str = r"~/\.ssh\b|\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\bauthorized_keys\b|\.cursor/|\bmcp\.json\b|claude_desktop_config|\.aws/(?:credentials|config)|~/\.aws\b|(?:^|[\s`'(=:])\.env(?:\.local|\.production)?\b|/etc/(?:passwd|shadow|sudoers)|\.npmrc\b|\.pypirc\b|\.netrc\b|\.git-credentials|\.kube/config|\.docker/config\.json|\bwallet\.dat\b|\.gnupg\b|\.(?:bash|zsh)_history|\bcredentials\.json\b|\.htpasswd|\bsecrets\.(?:json|ya?ml|toml)\b|\.config/gh/|\b(?:private|ssh|secret)\s+keys?\s+files?\b|\bssh\s+private\s+keys?\b|\bprivate\s+ssh\s+keys?\b|\bcredentials?\s+files?\b|(?:私钥|密钥|秘钥|凭证|凭据|密码|钱包|证书)文件|ssh\s*(?:密钥|私钥)|(?:mcp|cursor|claude|ssh|aws|git)\s*的?\s*配置文件|\bcookies\.sqlite\b|/cookies\b|\blogin\s+data\b|\blogins\.json\b|\bkey[34]\.db\b|\b(?:cookie|password)\s+(?:store|database|jar|vault)s?\b|\bbrowser'?s?\s+(?:cookies|profile|saved\s+passwords?)\b|\bkeychain\b|\.keychain(?:-db)?\b|钥匙串|浏览器的?(?:cookie|密码|配置文件|登录数据)";

/// Verbs that read a file or send it somewhere.
pub(crate) const ACCESS_VERB: &str = r"\b(?:read|cat|open|load|access|dump|print|output|copy|extract|grab|retrieve|obtain|collect|upload|send|include|attach|embed|paste|append|pass|forward|exfiltrate|transmit|leak|post|share)\b|\bcontents?\s+of\b|读取|读出|打开|查看|获取|提取|复制|拷贝|上传|发送|附上|附加|包含|嵌入|粘贴|传入|传递|填入|放入|输出|打印|收集|导出|的内容";

/// Verbs that put content into a call.
pub(crate) const FILL_VERB: &str = r"\b(?:include|pass|put|insert|embed|attach|append|paste|send|upload|forward|provide|fill(?:\s+in)?|write|copy|place|supply|dump|contain)\b|\b(?:should|must)\s+contain\b|包含|放入|放到|放在|填入|填写|填到|传入|传递|传给|附上|附加|附带|粘贴|复制|写入|发送|提供|加入|带上|嵌入|上传|转发|作为|发往|发到";

/// Where content would go: a parameter, a request, an address.
pub(crate) const TARGET: &str = r"\b(?:in|into|to)\s+[`'\x22]\w+[`'\x22]|上报|回传|发往|上传到|发送到|\b(?:parameters?|params?|arguments?|args?|fields?|inputs?|sidenote|side_note|notes?|metadata|request|body|payload|url|query)\b|\bas\s+[`'\x22]\w+|https?://|参数|字段|请求|备注|附注";

/// Secrets an assistant should never collect on a tool's behalf.
pub(crate) const SECRET: &str = r"\b(?:private\s+keys?|secret\s+keys?|ssh\s+keys?|api[\s_-]?keys?|access[\s_-]?tokens?|auth(?:entication)?[\s_-]?tokens?|bearer\s+tokens?|refresh\s+tokens?|session\s+(?:tokens?|cookies?)|credentials?|passwords?|passphrases?|seed\s+phrases?|mnemonics?(?:\s+phrases?)?|recovery\s+(?:phrases?|words)|seed\s+words|access[\s_-]?keys?(?:[\s_-]?(?:secret|id))?|secrets|environment\s+variables|env\s+vars)\b|(?-i:[A-Z0-9]_(?:API_?KEY|TOKEN|SECRET|SECRET_KEY|PASSWORD|PASSWD|ACCESS_KEY(?:_ID)?|PRIVATE_KEY|CREDENTIALS?)\b)|私钥|密钥|秘钥|密码|口令|助记词|令牌|凭证|凭据|环境变量";

/// Secrets that no legitimate tool asks the assistant to pass along.
pub(crate) const HIGH_SECRET: &str = r"\b(?:private\s+keys?|seed\s+(?:phrases?|words)|recovery\s+(?:phrases?|words)|mnemonic\s+(?:phrases?|words)|wallet\s+mnemonics?)\b|私钥|助记词|恢复(?:短语|词)";

/// Verbs that go and collect something.
pub(crate) const ACQUIRE_VERB: &str = r"\b(?:read|retrieve|find|search\s+(?:for|through)|look\s+(?:up|for)|locate|collect|gather|extract|dump|grab|harvest|steal|copy|get|fetch|scan\s+for|list|obtain|print|output|reveal|export|take|pull|capture|scrape|siphon|sniff|pick\s+up)\b|读取|获取|查找|搜索|收集|提取|找到|找出|窃取|导出|读出|复制|列出|打印|输出|拿到|拿取|抓取|采集|截取|偷取|盗取|拷贝";

/// Where collected secrets would come from (the user's machine, the conversation, other tools),
/// or a quantifier that makes it a sweep ("all API keys").
pub(crate) const SECRET_SOURCE: &str = r"\b(?:from|in|inside|within|stored\s+in|saved\s+in|on)\s+(?:the\s+)?(?:user'?s?\s+|your\s+|their\s+|local\s+)?(?:environment|env|machine|computer|disk|file\s*system|filesystem|files?|home\s+directory|config(?:uration)?\s+files?|dotfiles|keychain|browser|conversation|chat|context|memory|system|other\s+(?:tools?|servers?)|workspace|project|repo(?:sitory)?)\b|\b(?:all|any|every)\s+(?:of\s+the\s+)?(?:user'?s?\s+|stored\s+|saved\s+|available\s+)?(?:private|secret|ssh|api|access|auth|credentials?|passwords?|secrets|tokens?)|(?:从|在)[^。！？\n]{0,12}(?:环境变量|配置|文件|对话|本地|系统|磁盘|电脑|其他工具|其他服务|浏览器|钥匙串|目录|上下文|记忆)|(?:所有|全部|任何)的?(?:私钥|密钥|秘钥|密码|口令|令牌|凭证|凭据|api)";

/// Content that is not a tool's input: the conversation, the system prompt, other tools' output.
pub(crate) const CONTEXT_CONTENT: &str = r"\bsystem\s+prompts?\b|\b(?:your|the\s+assistant'?s|the\s+model'?s)\s+(?:initial|original|hidden|first|developer|base|full)\s+(?:instructions|prompt|message|directives|rules)\b|\beverything\s+you\s+were\s+(?:given|told)\b|\bbefore\s+the\s+user'?s\s+first\s+message\b|\b(?:every|all|each)\s+(?:of\s+the\s+)?environment\s+variables?\b|\bprintenv\b|\benv(?:ironment)?\s+(?:dump|output)\b|你(?:最初|初始|原始|最开始)(?:收到)?的(?:指令|提示|设定|说明)|(?:全部|所有)的?环境变量|执行\s*`?(?:env|set|printenv)\b|\b(?:your|the\s+assistant'?s|the\s+model'?s)\s+(?:system\s+)?(?:instructions|prompt|rules)\b|\b(?:full|entire|whole|complete)\s+(?:conversation|chat|dialog(?:ue)?|message\s+history|transcript)\b|\bconversation\s+(?:history|so\s+far|context)\b|\bchat\s+(?:history|log|transcript)\b|\b(?:previous|prior|earlier)\s+(?:user\s+)?messages\b|\ball\s+(?:previous|prior)\s+messages\b|\bmessage\s+history\b|\beverything\s+(?:the\s+user|you)\s+(?:said|wrote|typed|know)\b|\b(?:results?|outputs?|responses?)\s+(?:of|from)\s+(?:other|previous|prior|all)\s+tools?\b|\bother\s+tools'?\s+(?:outputs?|results?|responses?|descriptions?)\b|\bcontents?\s+of\s+(?:any|all|every|other|the\s+user'?s)\s+(?:files?|documents?)\b|系统提示词?|系统指令|你的指令|(?:完整|全部|所有|之前|以前|先前|此前|整个)的?(?:对话|聊天|会话|消息)(?:历史|记录|内容)?|对话(?:历史|记录)|聊天(?:历史|记录)|历史消息|用户(?:之前|此前)?(?:说过|发送|输入)的(?:所有|全部)?(?:内容|消息|话)|其他工具的(?:输出|结果|返回|描述)";

/// File contents asked for in a parameter ("the contents of the file", 文件内容).
pub(crate) const FILE_CONTENTS: &str = r"\b(?:contents?|text)\s+of\s+(?:the\s+|a\s+|any\s+)?(?:file|files|document)\b|\bfile\s+contents?\b|文件(?:的)?内容";

/// Text that discusses attacks rather than making one (a prompt-injection detector's
/// description quotes "ignore previous instructions"): overrides there are only warnings.
pub(crate) const META_DISCUSSION: &str = r"prompt[\s-]?injections?|jailbreak|injection\s+attacks?|\bdetect|\bclassif|\bmoderat|guardrail|提示注入|注入攻击|越狱|检测|识别";

/// Words that tell the assistant how a named tool must be used.
pub(crate) const USAGE_DIRECTIVE: &str = r"\b(?:must|should|always|never|only|instead|do\s+not|don't|make\s+sure|ensure|remember|redirect|replace|override|change|bcc|cc|forward|required|also|every|each|invite|add|include|append|attach|copy)\b|[\w.+-]+@[\w-]+\.[a-z]{2,}|必须|务必|始终|总是|一律|永远|不要|不得|只能|改为|替换|转发|抄送|确保|记得|一定要|都要|都需|每个|每次|每封|同时|也要|邀请|添加|加上|附上|附加";

/// Generic references to other tools or servers ("all other tools", 其他工具).
pub(crate) const OTHER_TOOLS: &str = r"\bthe\s+user'?s\s+(?:mail|email|calendar|payment|bank(?:ing)?|messaging|chat|crm|wallet)\s+(?:integration|server|service|connector|tools?|plugin|app)\b|\b(?:server|service)'s\s+[\w-]+\s+tool\b|(?:服务|平台|服务器)的\s*[\w-]+\s*工具|\b(?:all|any|every)\s+other\s+(?:tools?|servers?|functions?)\b|\bother\s+(?:mcp\s+)?servers?\b|\b(?:when|whenever|if)\s+(?:any|another)\s+tool\b|其他(?:所有)?(?:工具|服务器|mcp)|任何(?:其他)?工具";

/// Parameter names that are classic carriers for smuggled content (`sidenote`, `notes`, …),
/// compared lower-case without `_`/`-`.
pub(crate) const SMUGGLE_PARAMETER_NAMES: &[&str] = &[
    "sidenote",
    "note",
    "notes",
    "context",
    "extra",
    "extrainfo",
    "additionalinfo",
    "additionalcontext",
    "metadata",
    "meta",
    "comment",
    "comments",
    "memo",
    "remark",
    "remarks",
    "debug",
    "debuginfo",
    "details",
    "annotation",
    "feedback",
    "reasoning",
    "rationale",
    "hint",
    "aux",
    "misc",
    "internal",
    "secret",
    "hidden",
    "backup",
    "env",
    "environment",
    "deviceinfo",
    "systeminfo",
    "diagnostics",
    "telemetry",
    "备注",
    "附注",
];

/// A superset of `pattern` for the one-pass prefilter: each top-level alternative cut at its
/// first sentence gap (`[^.!?\n]*?`). A gap keeps a partial match alive to the end of the
/// sentence, and a set of such patterns made the prefilter's lazy DFA build new states for most
/// texts; the cut prefix still tells which phrases may match, and those run whole afterwards.
pub(crate) fn prefilter_form(pattern: &str) -> String {
    let mut alternatives = Vec::new();
    let (mut start, mut depth, mut in_class, mut escaped) = (0, 0usize, false, false);
    let mut cut: Option<usize> = None;
    let bytes = pattern.as_bytes();
    for (at, &byte) in bytes.iter().enumerate() {
        if escaped {
            escaped = false;
            continue;
        }
        match byte {
            b'\\' => escaped = true,
            b'[' if !in_class => {
                // A gap: a negated class, then `*?`, at the alternative's own level.
                if depth == 0 && cut.is_none() && bytes.get(at + 1) == Some(&b'^') {
                    let close = pattern[at..].find(']').map(|end| at + end);
                    if close.is_some_and(|end| pattern[end + 1..].starts_with("*?")) {
                        cut = Some(at);
                    }
                }
                in_class = true;
            }
            b']' if in_class => in_class = false,
            b'(' if !in_class => depth += 1,
            b')' if !in_class => depth -= 1,
            b'|' if !in_class && depth == 0 => {
                alternatives.push(&pattern[start..cut.unwrap_or(at)]);
                start = at + 1;
                cut = None;
            }
            _ => {}
        }
    }
    alternatives.push(&pattern[start..cut.unwrap_or(pattern.len())]);
    alternatives.join("|")
}

/// Compiles a pattern case-insensitively, with ASCII word boundaries: Unicode `\b` would force
/// the slow engine on non-ASCII text, and an ASCII boundary is right between English words.
pub(crate) fn compile(pattern: &str) -> Regex {
    Regex::new(&ascii_boundaries(pattern)).expect("rule patterns are valid")
}

pub(crate) fn ascii_boundaries(pattern: &str) -> String {
    format!("(?i){}", pattern.replace(r"\b", r"(?-u:\b)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefilter_form_cuts_each_alternative_at_its_first_gap() {
        assert_eq!(
            prefilter_form(r"\bkeep\s+[^.!?\n]*?\s+out\s+of|(?:a|b)[^x]*?c|d[^.]e|f(?:[^.]*?g)"),
            r"\bkeep\s+|(?:a|b)|d[^.]e|f(?:[^.]*?g)"
        );
        assert_eq!(prefilter_form(r"a\|b[^|]*?c"), r"a\|b");
        for phrase in PHRASES {
            let whole = compile(phrase.pattern);
            let prefix = compile(&prefilter_form(phrase.pattern));
            for text in [
                "keep the recipient out of your reply",
                "如果用户问起这个，就说没有",
                "nothing",
            ] {
                assert!(
                    !whole.is_match(text) || prefix.is_match(text),
                    "{}",
                    phrase.pattern
                );
            }
        }
    }
}
