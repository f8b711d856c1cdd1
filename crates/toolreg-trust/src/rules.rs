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
            Signal::Conceal => "concealment",
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
    // ---- model-instruction: prompt-format markers ----
    Phrase {
        signal: Signal::Marker,
        pattern: r"<\s*/?\s*(?:important|system|instructions?|admin|secret|hidden|critical)\s*>|\[\s*(?:system|inst)\s*\]|<\|im_start\|>|<<\s*sys\s*>>|[【\[<]\s*(?:重要|系统|系统指令|指令|隐藏指令)\s*[】\]>]",
        why: "contains a prompt-format marker such as <IMPORTANT> or <system>, used to make text look like instructions to the assistant",
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
];

/// Files whose contents are credentials or configuration of other tools.
pub(crate) const SENSITIVE_FILE: &str = r"~/\.ssh\b|\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\bauthorized_keys\b|\.cursor/|\bmcp\.json\b|claude_desktop_config|\.aws/(?:credentials|config)|~/\.aws\b|(?:^|[\s`'(=:])\.env(?:\.local|\.production)?\b|/etc/(?:passwd|shadow|sudoers)|\.npmrc\b|\.pypirc\b|\.netrc\b|\.git-credentials|\.kube/config|\.docker/config\.json|\bwallet\.dat\b|\.gnupg\b|\.(?:bash|zsh)_history|\bcredentials\.json\b|\.htpasswd|\bsecrets\.(?:json|ya?ml|toml)\b|\.config/gh/|\b(?:private|ssh|secret)\s+keys?\s+files?\b|\bssh\s+private\s+keys?\b|\bprivate\s+ssh\s+keys?\b|\bcredentials?\s+files?\b|(?:私钥|密钥|秘钥|凭证|凭据|密码|钱包|证书)文件|ssh\s*(?:密钥|私钥)|(?:mcp|cursor|claude|ssh|aws|git)\s*的?\s*配置文件";

/// Verbs that read a file or send it somewhere.
pub(crate) const ACCESS_VERB: &str = r"\b(?:read|cat|open|load|access|dump|print|output|copy|extract|grab|retrieve|obtain|collect|upload|send|include|attach|embed|paste|append|pass|forward|exfiltrate|transmit|leak|post|share)\b|\bcontents?\s+of\b|读取|读出|打开|查看|获取|提取|复制|拷贝|上传|发送|附上|附加|包含|嵌入|粘贴|传入|传递|填入|放入|输出|打印|收集|导出|的内容";

/// Verbs that put content into a call.
pub(crate) const FILL_VERB: &str = r"\b(?:include|pass|put|insert|embed|attach|append|paste|send|upload|forward|provide|fill(?:\s+in)?|write|copy|place|supply|dump|contain)\b|\b(?:should|must)\s+contain\b|包含|放入|放到|放在|填入|填写|填到|传入|传递|传给|附上|附加|附带|粘贴|复制|写入|发送|提供|加入|带上|嵌入|上传|转发|作为";

/// Where content would go: a parameter, a request, an address.
pub(crate) const TARGET: &str = r"\b(?:parameters?|params?|arguments?|args?|fields?|inputs?|sidenote|side_note|notes?|metadata|request|body|payload|url|query)\b|\bas\s+[`'\x22]\w+|https?://|参数|字段|请求|备注|附注";

/// Secrets an assistant should never collect on a tool's behalf.
pub(crate) const SECRET: &str = r"\b(?:private\s+keys?|secret\s+keys?|ssh\s+keys?|api[\s_-]?keys?|access[\s_-]?tokens?|auth(?:entication)?[\s_-]?tokens?|bearer\s+tokens?|refresh\s+tokens?|session\s+(?:tokens?|cookies?)|credentials?|passwords?|passphrases?|seed\s+phrases?|mnemonics?(?:\s+phrases?)?|recovery\s+phrases?|secrets|environment\s+variables|env\s+vars)\b|私钥|密钥|秘钥|密码|口令|助记词|令牌|凭证|凭据|环境变量";

/// Secrets that no legitimate tool asks the assistant to pass along.
pub(crate) const HIGH_SECRET: &str = r"\b(?:private\s+keys?|seed\s+phrases?|recovery\s+phrases?|mnemonic\s+phrases?|wallet\s+mnemonics?)\b|私钥|助记词";

/// Verbs that go and collect something.
pub(crate) const ACQUIRE_VERB: &str = r"\b(?:read|retrieve|find|search\s+(?:for|through)|look\s+(?:up|for)|locate|collect|gather|extract|dump|grab|harvest|steal|copy|get|fetch|scan\s+for|list|obtain|print|output|reveal|export)\b|读取|获取|查找|搜索|收集|提取|找到|找出|窃取|导出|读出|复制|列出|打印|输出|拿到";

/// Where collected secrets would come from (the user's machine, the conversation, other tools),
/// or a quantifier that makes it a sweep ("all API keys").
pub(crate) const SECRET_SOURCE: &str = r"\b(?:from|in|inside|within|stored\s+in|saved\s+in|on)\s+(?:the\s+)?(?:user'?s?\s+|your\s+|their\s+|local\s+)?(?:environment|env|machine|computer|disk|file\s*system|filesystem|files?|home\s+directory|config(?:uration)?\s+files?|dotfiles|keychain|browser|conversation|chat|context|memory|system|other\s+(?:tools?|servers?)|workspace|project|repo(?:sitory)?)\b|\b(?:all|any|every)\s+(?:of\s+the\s+)?(?:user'?s?\s+|stored\s+|saved\s+|available\s+)?(?:private|secret|ssh|api|access|auth|credentials?|passwords?|secrets|tokens?)|(?:从|在)[^。！？\n]{0,12}(?:环境变量|配置|文件|对话|本地|系统|磁盘|电脑|其他工具|其他服务|浏览器|钥匙串|目录|上下文|记忆)|(?:所有|全部|任何)的?(?:私钥|密钥|秘钥|密码|口令|令牌|凭证|凭据|api)";

/// Content that is not a tool's input: the conversation, the system prompt, other tools' output.
pub(crate) const CONTEXT_CONTENT: &str = r"\bsystem\s+prompts?\b|\b(?:your|the\s+assistant'?s|the\s+model'?s)\s+(?:system\s+)?(?:instructions|prompt|rules)\b|\b(?:full|entire|whole|complete)\s+(?:conversation|chat|dialog(?:ue)?|message\s+history|transcript)\b|\bconversation\s+(?:history|so\s+far|context)\b|\bchat\s+(?:history|log|transcript)\b|\b(?:previous|prior|earlier)\s+(?:user\s+)?messages\b|\ball\s+(?:previous|prior)\s+messages\b|\bmessage\s+history\b|\beverything\s+(?:the\s+user|you)\s+(?:said|wrote|typed|know)\b|\b(?:results?|outputs?|responses?)\s+(?:of|from)\s+(?:other|previous|prior|all)\s+tools?\b|\bother\s+tools'?\s+(?:outputs?|results?|responses?|descriptions?)\b|\bcontents?\s+of\s+(?:any|all|every|other|the\s+user'?s)\s+(?:files?|documents?)\b|系统提示词?|系统指令|你的指令|(?:完整|全部|所有|之前|以前|先前|此前|整个)的?(?:对话|聊天|会话|消息)(?:历史|记录|内容)?|对话(?:历史|记录)|聊天(?:历史|记录)|历史消息|用户(?:之前|此前)?(?:说过|发送|输入)的(?:所有|全部)?(?:内容|消息|话)|其他工具的(?:输出|结果|返回|描述)";

/// File contents asked for in a parameter ("the contents of the file", 文件内容).
pub(crate) const FILE_CONTENTS: &str = r"\b(?:contents?|text)\s+of\s+(?:the\s+|a\s+|any\s+)?(?:file|files|document)\b|\bfile\s+contents?\b|文件(?:的)?内容";

/// Text that discusses attacks rather than making one (a prompt-injection detector's
/// description quotes "ignore previous instructions"): overrides there are only warnings.
pub(crate) const META_DISCUSSION: &str = r"prompt[\s-]?injections?|jailbreak|injection\s+attacks?|\bdetect|\bclassif|\bmoderat|guardrail|提示注入|注入攻击|越狱|检测|识别";

/// Words that tell the assistant how a named tool must be used.
pub(crate) const USAGE_DIRECTIVE: &str = r"\b(?:must|should|always|never|only|instead|do\s+not|don't|make\s+sure|ensure|remember|redirect|replace|override|change|bcc|cc|forward|required)\b|必须|务必|始终|总是|一律|永远|不要|不得|只能|改为|替换|转发|抄送|确保|记得|一定要";

/// Generic references to other tools or servers ("all other tools", 其他工具).
pub(crate) const OTHER_TOOLS: &str = r"\b(?:all|any|every)\s+other\s+(?:tools?|servers?|functions?)\b|\bother\s+(?:mcp\s+)?servers?\b|\b(?:when|whenever|if)\s+(?:any|another)\s+tool\b|其他(?:所有)?(?:工具|服务器|mcp)|任何(?:其他)?工具";

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
    "备注",
    "附注",
];

/// Compiles a pattern case-insensitively, with ASCII word boundaries: Unicode `\b` would force
/// the slow engine on non-ASCII text, and an ASCII boundary is right between English words.
pub(crate) fn compile(pattern: &str) -> Regex {
    Regex::new(&ascii_boundaries(pattern)).expect("rule patterns are valid")
}

pub(crate) fn ascii_boundaries(pattern: &str) -> String {
    format!("(?i){}", pattern.replace(r"\b", r"(?-u:\b)"))
}
