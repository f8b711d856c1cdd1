//! Behaviour tests for [`SearchIndex`]: each one pins a rule of the `tool_search` contract.

use std::collections::HashSet;
use std::time::Instant;

use super::*;

struct T {
    name: &'static str,
    ns: &'static str,
    label: &'static str,
    desc: &'static str,
    params: Vec<(String, String)>,
}

fn tool(name: &'static str, ns: &'static str, desc: &'static str) -> T {
    T {
        name,
        ns,
        label: ns,
        desc,
        params: Vec::new(),
    }
}

fn put(idx: &mut SearchIndex, t: &T) {
    idx.upsert(&SearchDoc {
        name: t.name,
        namespace: t.ns,
        namespace_label: t.label,
        description: t.desc,
        params: &t.params,
    });
}

fn index(tools: &[T]) -> SearchIndex {
    let mut idx = SearchIndex::new();
    for t in tools {
        put(&mut idx, t);
    }
    idx.store.check_invariants();
    idx
}

/// [`index`] with other ranking knobs: the same tools with one rule off show what it does.
fn index_tuned(tools: &[T], tuning: Tuning) -> SearchIndex {
    let mut idx = SearchIndex::with_tuning(tuning);
    for t in tools {
        put(&mut idx, t);
    }
    idx
}

fn names(hits: &[SearchHit]) -> Vec<&str> {
    hits.iter().map(|h| h.name.as_str()).collect()
}

fn q(idx: &SearchIndex, query: &str) -> Vec<String> {
    let opts = SearchOptions {
        limit: 10,
        ..Default::default()
    };
    idx.search(query, &opts)
        .unwrap()
        .into_iter()
        .map(|h| h.name)
        .collect()
}

fn catalog() -> Vec<T> {
    let mut gh = tool(
        "github_create_issue",
        "mcp:gh",
        "Create a new issue in a GitHub repository",
    );
    gh.label = "mcp:GitHub";
    gh.params = vec![
        ("owner".into(), "Repository owner".into()),
        ("title".into(), "Issue title".into()),
    ];
    vec![
        gh,
        tool(
            "read_file",
            "fs",
            "Read the complete contents of a file from disk",
        ),
        tool(
            "write_file",
            "fs",
            "Create or overwrite a file with new content",
        ),
        tool(
            "list_directory",
            "fs",
            "List the entries of a folder; use read_file for contents",
        ),
        tool("web_search", "web", "Search the web for pages"),
        tool(
            "weather_now",
            "mcp:weather",
            "Current conditions for a city",
        ),
        tool(
            "bing_search",
            "mcp:bing",
            "使用必应搜索指定的关键词，并返回搜索结果列表",
        ),
        tool(
            "getHTTPStatus",
            "net",
            "Fetch a URL and report its status code",
        ),
    ]
}

#[test]
fn name_hit_beats_description_hit() {
    let idx = index(&[
        tool("send_email", "mail", "Deliver a message to someone"),
        tool(
            "post_note",
            "notes",
            "Store a note; can also email it later",
        ),
    ]);
    assert_eq!(q(&idx, "email"), ["send_email", "post_note"]);
}

#[test]
fn exact_name_ranks_first() {
    let idx = index(&catalog());
    // `read_file` is also mentioned in list_directory's description and shares "file" with
    // write_file; the exact name must still come first.
    let hits = q(&idx, "read_file");
    assert_eq!(hits[0], "read_file");
    assert!(hits.contains(&"write_file".to_string()));
}

#[test]
fn camel_case_and_acronym_names_are_searchable() {
    let idx = index(&catalog());
    assert_eq!(q(&idx, "http status")[0], "getHTTPStatus");
    assert_eq!(q(&idx, "github issue")[0], "github_create_issue");
}

#[test]
fn namespace_label_and_params_are_indexed() {
    let idx = index(&catalog());
    // "GitHub" only appears in the label and description; "owner" only in a parameter.
    assert_eq!(q(&idx, "owner"), ["github_create_issue"]);
    let mut idx2 = SearchIndex::new();
    let t = T {
        name: "create_ticket",
        ns: "mcp:x1",
        label: "mcp:Jira",
        desc: "Open a ticket",
        params: vec![],
    };
    put(&mut idx2, &t);
    put(&mut idx2, &tool("create_page", "mcp:x2", "Open a page"));
    assert_eq!(q(&idx2, "jira"), ["create_ticket"]);
}

#[test]
fn stemming_matches_inflections() {
    let idx = index(&catalog());
    assert_eq!(q(&idx, "creating issues")[0], "github_create_issue");
    assert!(q(&idx, "directories listing").contains(&"list_directory".to_string()));
}

#[test]
fn chinese_query_finds_chinese_description() {
    let idx = index(&catalog());
    assert_eq!(q(&idx, "搜索关键词"), ["bing_search"]);
    assert_eq!(q(&idx, "必应"), ["bing_search"]);
}

#[test]
fn accents_fold() {
    let idx = index(&[tool("cafe_menu", "food", "Menu du café")]);
    assert_eq!(q(&idx, "CAFÉ"), ["cafe_menu"]);
    assert_eq!(q(&idx, "cafe"), ["cafe_menu"]);
}

#[test]
fn select_returns_named_tools_in_order() {
    let idx = index(&catalog());
    let opts = SearchOptions::default();
    let hits = idx
        .search("select:web_search, read_file,nope,read_file", &opts)
        .unwrap();
    assert_eq!(names(&hits), ["web_search", "read_file"]);
    assert!(hits.iter().all(|h| h.score == 1.0));
    // Filters still apply.
    let only_fs = SearchOptions {
        namespace: Some("fs"),
        ..Default::default()
    };
    let hits = idx.search("select:web_search,read_file", &only_fs).unwrap();
    assert_eq!(names(&hits), ["read_file"]);
}

#[test]
fn plus_marks_required_terms() {
    let idx = index(&catalog());
    let all = q(&idx, "file search");
    assert!(all.contains(&"web_search".to_string()) && all.contains(&"read_file".to_string()));
    assert_eq!(q(&idx, "file +search"), ["web_search", "bing_search"]);
    // A required word nobody has means no results, even if other words match.
    assert!(q(&idx, "file +zzzunknown").is_empty());
    // A phone number is not a requirement.
    assert!(!q(&idx, "file +447800123456").is_empty());
}

#[test]
fn no_match_returns_empty() {
    let idx = index(&catalog());
    assert!(q(&idx, "the of and to").is_empty());
    assert!(q(&idx, "xylophone quasar").is_empty());
    assert!(q(&idx, "!!! ???").is_empty());
}

#[test]
fn browse_orders_by_label_then_name_and_truncates() {
    let idx = index(&catalog());
    let opts = SearchOptions {
        limit: 100,
        ..Default::default()
    };
    let hits = idx.search("   ", &opts).unwrap();
    assert_eq!(hits.len(), 8);
    assert!(hits.iter().all(|h| h.score == 0.0));
    assert_eq!(
        names(&hits),
        [
            "list_directory",
            "read_file",
            "write_file",
            "github_create_issue",
            "bing_search",
            "weather_now",
            "getHTTPStatus",
            "web_search"
        ]
    );
    let two = SearchOptions {
        limit: 2,
        ..Default::default()
    };
    assert_eq!(
        names(&idx.search("", &two).unwrap()),
        ["list_directory", "read_file"]
    );
}

#[test]
fn namespace_filter_matches_namespace_or_label() {
    let idx = index(&catalog());
    let by_id = SearchOptions {
        namespace: Some("mcp:gh"),
        limit: 10,
        ..Default::default()
    };
    let by_label = SearchOptions {
        namespace: Some("mcp:GitHub"),
        ..by_id
    };
    assert_eq!(
        names(&idx.search("create", &by_id).unwrap()),
        ["github_create_issue"]
    );
    assert_eq!(
        names(&idx.search("create", &by_label).unwrap()),
        ["github_create_issue"]
    );
    assert_eq!(
        names(&idx.search("", &by_label).unwrap()),
        ["github_create_issue"]
    );
    let none = SearchOptions {
        namespace: Some("mcp:GitHu"),
        ..by_id
    };
    assert!(idx.search("create", &none).unwrap().is_empty());
}

#[test]
fn allowed_set_restricts_results() {
    let idx = index(&catalog());
    let allowed: HashSet<String> = ["write_file".to_string()].into();
    let opts = SearchOptions {
        allowed: Some(&allowed),
        limit: 10,
        ..Default::default()
    };
    assert_eq!(names(&idx.search("file", &opts).unwrap()), ["write_file"]);
    assert_eq!(names(&idx.search("", &opts).unwrap()), ["write_file"]);
    assert!(idx.search("select:read_file", &opts).unwrap().is_empty());
    let rx = SearchOptions {
        mode: SearchMode::Regex,
        ..opts
    };
    assert_eq!(names(&idx.search("file", &rx).unwrap()), ["write_file"]);
}

#[test]
fn allowed_tool_is_found_below_many_better_ones() {
    let mut idx = SearchIndex::new();
    let many: Vec<String> = (0..50).map(|i| format!("file_tool_{i}")).collect();
    for n in &many {
        put(
            &mut idx,
            &T {
                // Test helper tools hold `&'static str`; leaking 50 short names is fine here.
                name: Box::leak(n.clone().into_boxed_str()),
                ns: "a",
                label: "a",
                desc: "file file file",
                params: vec![],
            },
        );
    }
    put(
        &mut idx,
        &tool("weak", "b", "a long description that mentions a file once"),
    );
    let allowed: HashSet<String> = ["weak".to_string()].into();
    let opts = SearchOptions {
        allowed: Some(&allowed),
        limit: 3,
        ..Default::default()
    };
    assert_eq!(names(&idx.search("file", &opts).unwrap()), ["weak"]);
}

#[test]
fn limit_truncates_ranked_results() {
    let idx = index(&catalog());
    let one = SearchOptions {
        limit: 1,
        ..Default::default()
    };
    assert_eq!(idx.search("file", &one).unwrap().len(), 1);
    let zero = SearchOptions {
        limit: 0,
        ..Default::default()
    };
    assert!(idx.search("file", &zero).unwrap().is_empty());
}

#[test]
fn results_are_sorted_by_score_then_name() {
    let idx = index(&[
        tool("b_tool", "x", "alpha"),
        tool("a_tool", "x", "alpha"),
        tool("c_tool", "x", "alpha alpha beta"),
    ]);
    let opts = SearchOptions {
        limit: 10,
        ..Default::default()
    };
    let hits = idx.search("alpha", &opts).unwrap();
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    let pos = |n: &str| hits.iter().position(|h| h.name == n).unwrap();
    assert_eq!(hits[pos("a_tool")].score, hits[pos("b_tool")].score);
    assert_eq!(pos("a_tool") + 1, pos("b_tool"));
}

#[test]
fn upsert_replaces_old_text() {
    let mut idx = index(&catalog());
    assert_eq!(q(&idx, "conditions"), ["weather_now"]);
    put(
        &mut idx,
        &tool(
            "weather_now",
            "mcp:weather",
            "Forecast temperatures for tomorrow",
        ),
    );
    idx.store.check_invariants();
    assert_eq!(idx.len(), 8);
    assert!(q(&idx, "conditions").is_empty());
    assert_eq!(q(&idx, "forecast"), ["weather_now"]);
}

#[test]
fn remove_deletes_and_reports() {
    let mut idx = index(&catalog());
    assert!(idx.remove("web_search"));
    assert!(!idx.remove("web_search"));
    idx.store.check_invariants();
    assert_eq!(idx.len(), 7);
    assert!(!idx.contains("web_search"));
    assert!(!q(&idx, "web").contains(&"web_search".to_string()));
    assert!(
        idx.search("select:web_search", &SearchOptions::default())
            .unwrap()
            .is_empty()
    );
    // The freed slot is reused and the new tool is found.
    put(&mut idx, &tool("web_fetch", "web", "Fetch one web page"));
    idx.store.check_invariants();
    assert_eq!(q(&idx, "fetch page")[0], "web_fetch");
}

#[test]
fn churn_keeps_bookkeeping_consistent() {
    let mut idx = SearchIndex::new();
    let words = [
        "alpha", "beta", "gamma", "delta", "file", "search", "issue", "天气",
    ];
    let mut state = 12345u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    let mut names = Vec::new();
    for i in 0..300 {
        let name = format!("tool_{}", next() % 60);
        let desc: Vec<&str> = (0..1 + next() % 6)
            .map(|_| words[next() % words.len()])
            .collect();
        let ns = format!("ns{}", next() % 5);
        let params = vec![(words[next() % words.len()].to_string(), desc.join(" "))];
        idx.upsert(&SearchDoc {
            name: &name,
            namespace: &ns,
            namespace_label: &ns,
            description: &desc.join(" "),
            params: &params,
        });
        names.push(name);
        if i % 3 == 0 {
            let victim = &names[next() % names.len()];
            idx.remove(victim);
        }
        idx.store.check_invariants();
    }
    // Every live tool is still findable by its exact name.
    for (_, d) in idx.store.live_docs() {
        assert_eq!(q(&idx, &d.name)[0], d.name);
    }
}

#[test]
fn ranking_does_not_depend_on_namespace_grouping() {
    // Issue #13: evidence pooled from a tool's namespace made the ranking depend on how a host
    // grouped its tools (and lost to plain BM25 when a group was large or mixed). A tool is now
    // scored on its own text: regrouping the same tools (labels that match no query word)
    // changes no score and no order.
    let texts = [
        ("track", "Track a parcel shipment by number"),
        ("state_y", "Current state"),
        ("state_x", "Current state of a parcel"),
        ("weather", "Weather forecast for a city"),
    ];
    let layouts: [[&'static str; 4]; 3] = [
        ["n1", "n1", "n2", "n2"],
        ["all", "all", "all", "all"],
        ["t1", "t2", "t3", "t4"],
    ];
    let mut results = Vec::new();
    for layout in layouts {
        let tools: Vec<T> = texts
            .iter()
            .zip(layout)
            .map(|(&(name, desc), ns)| tool(name, ns, desc))
            .collect();
        let idx = index(&tools);
        let opts = SearchOptions {
            limit: 10,
            ..Default::default()
        };
        results.push(idx.search("parcel state", &opts).unwrap());
    }
    assert_eq!(names(&results[0])[..2], ["state_x", "state_y"]);
    assert_eq!(results[0], results[1]);
    assert_eq!(results[0], results[2]);
}

#[test]
fn regex_mode_ranks_name_matches_first() {
    let idx = index(&catalog());
    let rx = SearchOptions {
        mode: SearchMode::Regex,
        limit: 10,
        ..Default::default()
    };
    let hits = idx.search("READ_?FILE", &rx).unwrap();
    // read_file matches by name (and not its description); list_directory only by description.
    assert_eq!(names(&hits), ["read_file", "list_directory"]);
    assert!(hits[0].score > hits[1].score);
    assert_eq!(names(&idx.search("^web_", &rx).unwrap()), ["web_search"]);
    assert_eq!(names(&idx.search("必应", &rx).unwrap()), ["bing_search"]);
}

#[test]
fn regex_rejects_long_and_invalid_patterns() {
    let idx = index(&catalog());
    let rx = SearchOptions {
        mode: SearchMode::Regex,
        ..Default::default()
    };
    let long = "a".repeat(MAX_REGEX_LEN + 1);
    match idx.search(&long, &rx) {
        Err(SearchError::RegexTooLong { len, max }) => {
            assert_eq!((len, max), (MAX_REGEX_LEN + 1, MAX_REGEX_LEN));
        }
        other => panic!("expected RegexTooLong, got {other:?}"),
    }
    assert!(idx.search(&"a".repeat(MAX_REGEX_LEN), &rx).is_ok());
    let err = idx.search("read_(file", &rx).unwrap_err();
    assert!(matches!(err, SearchError::InvalidRegex(_)));
    assert!(
        err.to_string().starts_with("invalid regex pattern:"),
        "{err}"
    );
    // A pattern that compiles to a huge program is refused, not built.
    let err = idx.search(r"\w{1000}\w{1000}\w{1000}", &rx).unwrap_err();
    assert!(
        matches!(err, SearchError::RegexTooComplex { .. }),
        "{err:?}"
    );
}

#[test]
fn regex_has_no_catastrophic_backtracking() {
    let long = format!("{}!", "a".repeat(50_000));
    let mut idx = SearchIndex::new();
    let params = Vec::new();
    idx.upsert(&SearchDoc {
        name: "victim",
        namespace: "x",
        namespace_label: "x",
        description: &long,
        params: &params,
    });
    let rx = SearchOptions {
        mode: SearchMode::Regex,
        ..Default::default()
    };
    let start = Instant::now();
    // The text ends in `!`, so a backtracking engine tries ~2^50000 ways to split the `a`s
    // before failing; a linear-time engine answers in milliseconds.
    assert!(idx.search("(a+)+$", &rx).unwrap().is_empty());
    assert!(idx.search("(a|aa)+b", &rx).unwrap().is_empty());
    assert!(start.elapsed().as_secs_f64() < 2.0, "{:?}", start.elapsed());
    assert_eq!(names(&idx.search("(a+)+!$", &rx).unwrap()), ["victim"]);
}

#[test]
fn query_word_prefix_finds_compounds() {
    let idx = index(&[
        tool(
            "market_prices",
            "fin",
            "Prices of cryptocurrencies and stocks",
        ),
        tool("weather_now", "wx", "Current weather"),
    ]);
    assert_eq!(q(&idx, "crypto"), ["market_prices"]);
    let off = SearchIndex::with_tuning(Tuning {
        prefix_weight: 0.0,
        ..Tuning::default()
    });
    let mut off = off;
    put(
        &mut off,
        &tool("market_prices", "fin", "Prices of cryptocurrencies"),
    );
    assert!(q(&off, "crypto").is_empty());
}

#[test]
fn word_order_shared_with_a_name_ranks_higher() {
    let idx = index(&[
        tool("get_clips_channel", "a", ""),
        tool("get_channel_clips", "b", ""),
    ]);
    // Same words, same lengths; only the phrase "channel clips" tells them apart.
    assert_eq!(
        q(&idx, "show channel clips"),
        ["get_channel_clips", "get_clips_channel"]
    );
}

#[test]
fn request_phrasing_weighs_less_than_content_words() {
    // Symmetric tools: one says "provide", the other "weather". Unweighted, they tie and the
    // name decides; with request words weighted down, the content word wins.
    let tools = [
        tool("aa_desk", "a", "provide"),
        tool("zz_now", "b", "weather"),
    ];
    let idx = index(&tools);
    assert_eq!(q(&idx, "provide weather"), ["zz_now", "aa_desk"]);
    let mut flat = SearchIndex::with_tuning(Tuning {
        request_word_weight: 1.0,
        ..Tuning::default()
    });
    tools.iter().for_each(|t| put(&mut flat, t));
    assert_eq!(q(&flat, "provide weather"), ["aa_desk", "zz_now"]);
}

#[test]
fn weak_stray_matches_are_dropped() {
    // Ten tools share "common"; one also has three rare words. The ten match the query only
    // through a near-zero-IDF word and fall under the relative floor.
    let names = ["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"];
    let mut tools: Vec<T> = names.iter().map(|n| tool(n, "x", "common word")).collect();
    tools.push(tool("target", "y", "zeta theta iota common"));
    let idx = index(&tools);
    assert_eq!(q(&idx, "zeta theta iota common"), ["target"]);
    let mut keep = SearchIndex::with_tuning(Tuning {
        min_relative_score: 0.0,
        ..Tuning::default()
    });
    tools.iter().for_each(|t| put(&mut keep, t));
    assert!(q(&keep, "zeta theta iota common").len() > 1);
}

#[test]
fn odd_input_does_not_panic() {
    let mut idx = index(&catalog());
    let params = vec![("a.b[].c".to_string(), "🚀 émoji ok".to_string())];
    let rtl = "مرحبا بالعالم e\u{301}t\u{e9} 🙂 \u{200b}zero-width";
    idx.upsert(&SearchDoc {
        name: "odd🙂name",
        namespace: "",
        namespace_label: "",
        description: rtl,
        params: &params,
    });
    idx.store.check_invariants();
    for query in [
        "🙂",
        "+",
        "++",
        "+ +",
        "select:",
        "select:,,",
        "ＡＢＣ",
        "\u{0}",
        rtl,
        "a.b[].c",
    ] {
        let _ = q(&idx, query);
    }
    let long = "word ".repeat(5_000);
    let start = Instant::now();
    let _ = q(&idx, &long);
    assert!(start.elapsed().as_secs_f64() < 1.0);
}

#[test]
fn concurrent_queries_share_one_index() {
    let idx = index(&catalog());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..200 {
                    assert_eq!(q(&idx, "read_file")[0], "read_file");
                    assert_eq!(q(&idx, "搜索")[0], "bing_search");
                }
            });
        }
    });
}

#[test]
fn vocabulary_shrinks_when_tools_go() {
    let mut idx = index(&catalog());
    let before = idx.store.terms.len();
    put(
        &mut idx,
        &tool("temp_tool", "tmp", "xylophone marimba glockenspiel"),
    );
    assert!(idx.store.terms.len() > before);
    assert!(idx.remove("temp_tool"));
    idx.store.check_invariants();
    assert_eq!(idx.store.terms.len(), before);
    assert!(format!("{idx:?}").starts_with("SearchIndex { tools: 8"));
}

#[test]
fn search_index_is_send_sync_default() {
    fn check<T: Send + Sync + Default>() {}
    check::<SearchIndex>();
}

// ---------------------------------------------------------------------------------------------
// Hybrid search: vectors per tool, fused with the word ranking.

/// Scripted embedding: one dimension per concept keyword, plus a small constant.
fn concept_vec(text: &str) -> Vec<f32> {
    let t = text.to_lowercase();
    let has = |words: &[&str]| f32::from(u8::from(words.iter().any(|w| t.contains(w))));
    vec![
        has(&["rain", "forecast"]),
        has(&["theme", "widget"]),
        has(&["mail", "inbox"]),
        0.05,
    ]
}

fn embed_all(idx: &mut SearchIndex) {
    for (name, text) in idx.take_pending_vectors(usize::MAX) {
        assert!(idx.set_vector(&name, &text, &concept_vec(&text)).unwrap());
    }
}

fn hybrid_catalog() -> SearchIndex {
    let mut idx = SearchIndex::new();
    idx.enable_vectors();
    for t in [
        tool(
            "weather_widget_theme",
            "ui",
            "Change the color theme of the weather widget",
        ),
        tool("forecast_lookup", "wx", "Rain outlook for a location"),
        tool("send_mail", "mail", "Send a message from the inbox"),
    ] {
        put(&mut idx, &t);
    }
    embed_all(&mut idx);
    idx
}

fn hq(idx: &SearchIndex, query: &str, opts: &SearchOptions) -> Vec<String> {
    idx.search_hybrid(query, Some(&concept_vec(query)), opts)
        .unwrap()
        .into_iter()
        .map(|h| h.name)
        .collect()
}

#[test]
fn hybrid_ranks_the_meaning_match_first_where_words_alone_fail() {
    let idx = hybrid_catalog();
    assert_eq!(q(&idx, "weather rain")[0], "weather_widget_theme");
    let opts = SearchOptions::default();
    assert_eq!(hq(&idx, "weather rain", &opts)[0], "forecast_lookup");
    // No vector: the word ranking, unchanged.
    assert_eq!(
        names(&idx.search_hybrid("weather rain", None, &opts).unwrap()),
        names(&idx.search("weather rain", &opts).unwrap())
    );
    // Fits nothing in words or meaning: nothing.
    assert!(hq(&idx, "zebra xylophone", &opts).is_empty());
    // select: and browse ignore the vector.
    assert_eq!(hq(&idx, "select:send_mail", &opts), ["send_mail"]);
}

#[test]
fn hybrid_takes_each_tools_best_match_over_the_query_sentences() {
    let idx = hybrid_catalog();
    let opts = SearchOptions::default();
    // No shared words; the whole query's vector blurs two requests into neither.
    let query = "Will it pour tomorrow? Then write to Ann.";
    let blur = [0.1f32, 0.0, 0.1, 1.0];
    assert!(
        idx.search_hybrid(query, Some(&blur), &opts)
            .unwrap()
            .is_empty()
    );
    let mut with_sentences = blur.to_vec();
    with_sentences.extend([1.0, 0.0, 0.0, 0.05, 0.0, 0.0, 1.0, 0.05]);
    let hits = idx
        .search_hybrid(query, Some(&with_sentences), &opts)
        .unwrap();
    let mut found = names(&hits);
    found.sort_unstable();
    assert_eq!(found, ["forecast_lookup", "send_mail"]);
}

/// Two tools where words and vectors disagree: `words_pick`'s description shares the
/// request's words, `dense_pick`'s vector is the request's. Ranked with `dense_weight` 0.1 and
/// `cjk_dense_weight` 0.9, or the other way round (`cjk_first`).
fn disagreeing_pair(request: &str, words_pick: T, dense_pick: T, cjk_first: bool) -> String {
    let (cjk, other) = if cjk_first { (0.9, 0.1) } else { (0.1, 0.9) };
    let mut idx = SearchIndex::with_tuning(Tuning {
        cjk_dense_weight: cjk,
        dense_weight: other,
        ..Tuning::default()
    });
    idx.enable_vectors();
    for (t, v) in [(&words_pick, [1.0, 0.0]), (&dense_pick, [0.0, 1.0])] {
        put(&mut idx, t);
        let text = embedding_text(t.name, t.label, t.desc);
        assert!(idx.set_vector(t.name, &text, &v).unwrap());
    }
    let hits = idx
        .search_hybrid(request, Some(&[0.2, 1.0]), &SearchOptions::default())
        .unwrap();
    hits[0].name.clone()
}

#[test]
fn a_cjk_request_over_a_cjk_catalog_weighs_meaning_with_its_own_weight() {
    // Chinese request, tools described in Chinese: `cjk_dense_weight` decides.
    let chinese = || {
        (
            tool("forecast", "wx", "查询天气预报"),
            tool("rain_odds", "wx", "降雨概率"),
        )
    };
    let (w, d) = chinese();
    assert_eq!(
        disagreeing_pair("帮我查一下天气预报", w, d, true),
        "rain_odds"
    );
    let (w, d) = chinese();
    assert_eq!(
        disagreeing_pair("帮我查一下天气预报", w, d, false),
        "forecast"
    );
    // Chinese request, tools described in English: `dense_weight` decides, whatever
    // `cjk_dense_weight` is.
    let english = || {
        (
            tool(
                "github_issues",
                "gh",
                "List the issues of a GitHub repository",
            ),
            tool("repo_stats", "gh", "Statistics of a code repository"),
        )
    };
    let (w, d) = english();
    assert_eq!(
        disagreeing_pair("查看github仓库的问题", w, d, true),
        "github_issues"
    );
    let (w, d) = english();
    assert_eq!(
        disagreeing_pair("查看github仓库的问题", w, d, false),
        "repo_stats"
    );
    // English request, tools described in Chinese: `dense_weight` too.
    let (w, d) = (
        tool("forecast", "wx", "查询天气预报 forecast"),
        tool("rain_odds", "wx", "降雨概率"),
    );
    assert_eq!(
        disagreeing_pair("show the forecast", w, d, true),
        "forecast"
    );
    // Chinese request, a catalog not mostly Chinese (one tool of two): `dense_weight`.
    let (w, d) = (
        tool("forecast", "wx", "查询天气预报"),
        tool("rain_odds", "wx", "Chance of rain"),
    );
    assert_eq!(
        disagreeing_pair("帮我查一下天气预报", w, d, true),
        "forecast"
    );
}

#[test]
fn hybrid_applies_filters_to_dense_hits() {
    let idx = hybrid_catalog();
    let allowed: HashSet<String> = ["send_mail".to_string()].into();
    let opts = SearchOptions {
        allowed: Some(&allowed),
        ..Default::default()
    };
    assert_eq!(hq(&idx, "rain inbox", &opts), ["send_mail"]);
    let opts = SearchOptions {
        namespace: Some("mail"),
        ..Default::default()
    };
    assert!(hq(&idx, "rain", &opts).is_empty());
}

#[test]
fn vectors_follow_upserts_and_removals() {
    let mut idx = hybrid_catalog();
    assert_eq!(idx.vector_stats().ready, 3);
    // Same text: the vector is kept, nothing to embed.
    put(
        &mut idx,
        &tool("forecast_lookup", "wx", "Rain outlook for a location"),
    );
    assert_eq!(
        (idx.vector_stats().ready, idx.vector_stats().pending),
        (3, 0)
    );
    // New text: queued; a vector computed for the old text is refused.
    put(
        &mut idx,
        &tool("forecast_lookup", "wx", "Hourly rain forecast"),
    );
    assert_eq!(
        (idx.vector_stats().ready, idx.vector_stats().pending),
        (2, 1)
    );
    let old = embedding_text("forecast_lookup", "wx", "Rain outlook for a location");
    assert!(
        !idx.set_vector("forecast_lookup", &old, &[1.0, 0.0, 0.0, 0.0])
            .unwrap()
    );
    let jobs = idx.take_pending_vectors(10);
    assert_eq!(jobs.len(), 1);
    assert!(jobs[0].1.contains("Hourly rain forecast"));
    // A failed embedding goes back to the queue.
    idx.requeue_vectors(["forecast_lookup"]);
    assert_eq!(idx.vector_stats().pending, 1);
    embed_all(&mut idx);
    assert_eq!(idx.vector_stats().ready, 3);
    // Wrong dimension: an error, nothing stored.
    assert!(matches!(
        idx.set_vector("send_mail", "x", &[1.0, 2.0]),
        Err(SearchError::VectorDim {
            expected: 4,
            got: 2
        })
    ));
    assert!(matches!(
        idx.search_hybrid("rain", Some(&[1.0]), &SearchOptions::default()),
        Err(SearchError::QueryVectorLength { dim: 4, got: 1 })
    ));
    // Removal frees the vector; a reused slot starts without one.
    assert!(idx.remove("forecast_lookup"));
    assert_eq!(
        (idx.vector_stats().ready, idx.vector_stats().pending),
        (2, 0)
    );
    put(&mut idx, &tool("other_tool", "wx", "Rain radar"));
    assert_eq!(
        (idx.vector_stats().ready, idx.vector_stats().pending),
        (2, 1)
    );
    idx.store.check_invariants();
}

#[test]
fn enabling_vectors_later_queues_existing_tools() {
    let mut idx = index(&catalog());
    let n = idx.len();
    assert_eq!(idx.vector_stats(), VectorStats::default());
    idx.enable_vectors();
    assert_eq!(idx.vector_stats().pending, n);
    assert_eq!(idx.take_pending_vectors(3).len(), 3);
    assert_eq!(idx.vector_stats().pending, n - 3);
}

#[test]
fn builtin_embeddings_find_a_tool_by_meaning() {
    let tools = [
        tool(
            "crypto_quotes",
            "fin",
            "Live quotes for cryptocurrencies and stocks",
        ),
        tool("weather_now", "wx", "Current weather conditions for a city"),
        tool("send_mail", "mail", "Send an email message"),
    ];
    let query = "how is bitcoin trading";
    let opts = SearchOptions::default();
    let mut idx = index(&tools);
    assert!(idx.search(query, &opts).unwrap().is_empty());
    // Vectors computed by the caller: queued, not computed here.
    idx.enable_builtin_vectors();
    assert_eq!(
        (idx.vector_stats().ready, idx.vector_stats().pending),
        (0, 3)
    );
    assert!(idx.search_hybrid(query, None, &opts).unwrap().is_empty());
    // Computed by the index itself, now and on later upserts.
    idx.use_builtin_embeddings();
    assert_eq!(
        (idx.vector_stats().ready, idx.vector_stats().pending),
        (3, 0)
    );
    assert_eq!(
        idx.search_hybrid(query, None, &opts).unwrap()[0].name,
        "crypto_quotes"
    );
    put(
        &mut idx,
        &tool("rain_radar", "wx", "Precipitation radar maps"),
    );
    assert_eq!(idx.vector_stats().ready, 4);
    // A query of stopwords only has no vector: the word ranking (here: nothing).
    assert!(
        idx.search_hybrid("what is it", None, &opts)
            .unwrap()
            .is_empty()
    );
}

/// A bulk build (analysed on several threads) must be the index one-by-one upserts build:
/// same hits with the same scores, same term ids, with replaced tools and repeated names.
#[test]
fn bulk_upsert_matches_one_by_one() {
    let words = [
        "create",
        "issue",
        "repository",
        "weather",
        "forecast",
        "send",
        "email",
        "calendar",
        "event",
        "search",
        "file",
        "read",
        "write",
        "database",
        "query",
        "stock",
        "price",
        "translate",
        "text",
        "image",
        "天气",
        "预报",
        "café",
        "naïve",
    ];
    let word = |i: usize| words[i % words.len()];
    type Fields = (String, String, String, Vec<(String, String)>);
    let docs: Vec<Fields> = (0..3000)
        .map(|i| {
            // Every 500th tool repeats an earlier name: the later one must win.
            let n = if i % 500 == 499 { i - 7 } else { i };
            let name = format!("{}_{}_{n}", word(n), word(n / 3));
            let ns = format!("server{}", n % 37);
            let desc = format!(
                "{} the {} {} of a {} ({})",
                word(i * 7),
                word(i / 5),
                word(i * 3 + 1),
                word(i / 11),
                i
            );
            let params = vec![(
                word(i + 2).to_owned(),
                format!("the {} to {}", word(i), word(i / 2)),
            )];
            (name, ns, desc, params)
        })
        .collect();
    let all: Vec<SearchDoc> = docs
        .iter()
        .map(|(name, ns, desc, params)| SearchDoc {
            name,
            namespace: ns,
            namespace_label: ns,
            description: desc,
            params,
        })
        .collect();
    // Both indexes start with tools the batch replaces or keeps.
    let seed: Vec<SearchDoc> = all[100..200].iter().chain(&all[2900..]).cloned().collect();
    let mut one_by_one = SearchIndex::new();
    let mut bulk = SearchIndex::new();
    for doc in &seed {
        one_by_one.upsert(doc);
        bulk.upsert(doc);
    }
    for doc in &all {
        one_by_one.upsert(doc);
    }
    bulk.upsert_many(&all);
    one_by_one.store.check_invariants();
    bulk.store.check_invariants();
    assert_eq!(bulk.len(), one_by_one.len());
    let mut terms: Vec<_> = one_by_one.store.terms.iter().collect();
    terms.sort();
    let mut bulk_terms: Vec<_> = bulk.store.terms.iter().collect();
    bulk_terms.sort();
    assert_eq!(
        bulk_terms.iter().map(|t| t.0).collect::<Vec<_>>(),
        terms.iter().map(|t| t.0).collect::<Vec<_>>()
    );
    let opts = SearchOptions {
        limit: 20,
        ..Default::default()
    };
    for query in [
        "create an issue",
        "weather forecast 天气",
        "cafe",
        "stock price query",
        "",
    ] {
        let a = one_by_one.search(query, &opts).unwrap();
        let b = bulk.search(query, &opts).unwrap();
        let pairs = |hits: &[SearchHit]| -> Vec<(String, String)> {
            hits.iter()
                .map(|h| (h.name.clone(), format!("{:.9}", h.score)))
                .collect()
        };
        assert_eq!(pairs(&b), pairs(&a), "{query}");
        assert!(!a.is_empty() || query.is_empty());
    }
}

/// Each of the three ranking faults below is a class seen on data the ranker was not tuned on
/// (docs/search-ranking.md, "The three faults and what fixed them"); these pin one instance of each.
#[test]
fn a_rare_decisive_word_outweighs_a_phrase_of_common_words() {
    let tools = [
        tool(
            "speech_recognition",
            "voice",
            "Recognise speech in an audio file: speech audio to a transcript.",
        ),
        tool("audio_trim", "voice", "Trim silence from an audio file."),
        tool("audio_convert", "voice", "Convert an audio file to MP3."),
        tool("audio_merge", "voice", "Merge two audio files into one."),
        tool("speech_rate", "voice", "Words per minute of a speech."),
        tool("japanese_tts", "voice", "Japanese text to speech."),
    ];
    let query = "Japanese speech audio file";
    assert_eq!(q(&index(&tools), query)[0], "japanese_tts");
    // The fault, with a phrase weighed by its own rarity: two common adjacent words win.
    let uncapped = index_tuned(
        &tools,
        Tuning {
            phrase_idf: PhraseIdf::Own,
            ..Tuning::default()
        },
    );
    assert_eq!(q(&uncapped, query)[0], "speech_recognition");
}

#[test]
fn a_noun_typed_as_written_beats_the_verb_it_stems_to() {
    let tools = [
        tool("buildApk", "dev", "Build an Android APK from the project."),
        tool("buildTower", "game", "Build a tower on the map."),
        tool(
            "getBuildingInfo",
            "city",
            "Floors, owner and address of a building.",
        ),
    ];
    let idx = index(&tools);
    let hits = q(&idx, "building");
    assert_eq!(hits[0], "getBuildingInfo", "{hits:?}");
    // The stem still reaches the verbs.
    assert!(hits.contains(&"buildApk".to_string()), "{hits:?}");
    // The fault, stems alone: the shorter verb names win.
    let stems_only = index_tuned(
        &tools,
        Tuning {
            surface_weight: 0.0,
            ..Tuning::default()
        },
    );
    assert_ne!(q(&stems_only, "building")[0], "getBuildingInfo");
}

#[test]
fn an_opaque_id_in_a_query_does_not_match_one_letter_name_parts() {
    let tools = [
        tool(
            "getB2BMarketingData",
            "crm",
            "Marketing figures for business customers.",
        ),
        tool("get_order", "shop", "Look up an order by its id."),
    ];
    let query = "where is order KsuxdqnB";
    assert_eq!(q(&index(&tools), query), ["get_order"]);
    // The fault, the letter taken as a word.
    let letters = index_tuned(
        &tools,
        Tuning {
            drop_split_letters: false,
            ..Tuning::default()
        },
    );
    assert!(q(&letters, query).contains(&"getB2BMarketingData".to_string()));
    // An id typed alone still finds a tool whose name is that id.
    let idx = index(&[tool("KsuxdqnB", "ids", "An opaque tool name.")]);
    assert_eq!(q(&idx, "KsuxdqnB"), ["KsuxdqnB"]);
}

/// Request phrasing of a Chinese request ("帮我查一下…") is no evidence for a tool, however
/// rare it is in the catalog (docs/search-ranking.md, "Search in the user's language").
#[test]
fn chinese_request_phrasing_finds_no_tool() {
    let idx = index(&[
        tool(
            "city_weather",
            "weather",
            "查询城市的实时天气和未来一周的天气预报",
        ),
        tool(
            "preview_file",
            "files",
            "先预览一下文件的内容，再决定是否下载",
        ),
    ]);
    // The file tool's description happens to say 一下; the request only asks for the weather.
    assert_eq!(q(&idx, "帮我查一下明天的天气"), ["city_weather"]);
}

#[test]
fn a_dictionary_glosses_chinese_requests_for_english_tools() {
    let bridge = std::sync::Arc::new(
        bridge::LanguageBridge::parse("撤回\trecall withdraw\n消息\tnews message\n天气\tweather\n")
            .unwrap(),
    );
    let tools = [
        tool("recall_message", "chat", "Recall a message that was sent"),
        tool("get_weather", "weather", "Weather forecast for a city"),
        tool("send_message", "chat", "Send a message to a channel"),
    ];
    let mut idx = index(&tools);
    assert!(q(&idx, "撤回消息").is_empty());
    idx.set_language_bridge(Some(bridge.clone()));
    assert_eq!(q(&idx, "撤回消息")[0], "recall_message");
    assert_eq!(q(&idx, "北京天气")[0], "get_weather");
    // A typed word outweighs a gloss: "send" typed beats the gloss "recall".
    assert_eq!(q(&idx, "撤回 send")[0], "send_message");
    // English requests do not change.
    let plain = index(&tools);
    assert_eq!(q(&idx, "recall a message"), q(&plain, "recall a message"));
    idx.set_language_bridge(None);
    assert!(q(&idx, "撤回消息").is_empty());
}

/// The other direction: a tool described only in Chinese gets the glosses of its description's
/// terms in a field of their own, so an English request finds it, below a tool whose author
/// wrote the same words.
#[test]
fn a_dictionary_glosses_chinese_descriptions_for_english_requests() {
    let bridge = std::sync::Arc::new(
        bridge::LanguageBridge::parse("获取\tget obtain\n黄历\talmanac\n热搜\tpopular search\n")
            .unwrap(),
    );
    let tools = [
        tool("getChineseCalendar", "bazi", "获取指定日期的黄历信息"),
        tool("get-weibo-trending", "trends", "获取微博热搜榜"),
        tool("web_search", "web", "Popular web search engine results"),
    ];
    let mut idx = SearchIndex::new();
    idx.set_language_bridge(Some(bridge.clone()));
    for t in &tools {
        put(&mut idx, t);
    }
    idx.store.check_invariants();
    assert_eq!(q(&idx, "the almanac"), ["getChineseCalendar"]);
    assert_eq!(q(&idx, "get the almanac")[0], "getChineseCalendar");
    // Words the author wrote outweigh a dictionary's guesses.
    assert_eq!(
        q(&idx, "popular search")[..2],
        ["web_search", "get-weibo-trending"]
    );
    // Without the dictionary only the typed words of the catalog match.
    assert!(q(&index(&tools), "the almanac").is_empty());
    // An English catalog is indexed exactly as without a dictionary.
    let english = [tool(
        "web_search",
        "web",
        "Popular web search engine results",
    )];
    let mut glossing = SearchIndex::new();
    glossing.set_language_bridge(Some(bridge));
    put(&mut glossing, &english[0]);
    let plain = index(&english);
    assert_eq!(glossing.store.doc_lens, plain.store.doc_lens);
    assert_eq!(glossing.store.terms.len(), plain.store.terms.len());
}

/// A catalog mostly in English with a few tools described in Chinese: a Chinese request's
/// common word (`获取`, "get") is rare there only because Chinese is, and counts no more than
/// its meaning does in the catalog.
#[test]
fn a_chinese_word_is_no_rarer_than_its_meaning() {
    let bridge = std::sync::Arc::new(
        bridge::LanguageBridge::parse("获取\tget obtain\n勋章\tbadge medal\n").unwrap(),
    );
    let mut tools = vec![
        tool("get-weibo-trending", "trends", "获取微博热搜榜"),
        tool("get-zhihu-trending", "trends", "获取知乎热榜"),
        tool(
            "award_details",
            "admin",
            "Details of a badge: its name and image",
        ),
    ];
    for name in [
        "get_user",
        "get_file",
        "get_issue",
        "get_repo",
        "get_page",
        "get_event",
    ] {
        tools.push(tool(name, "api", "Get one item by its id"));
    }
    let ranked = |cap: CjkIdfCap| {
        let mut idx = SearchIndex::with_tuning(Tuning {
            cjk_idf_cap: cap,
            ..Tuning::default()
        });
        idx.set_language_bridge(Some(bridge.clone()));
        for t in &tools {
            put(&mut idx, t);
        }
        q(&idx, "获取勋章")
    };
    // Rare as a Chinese word, 获取 outweighs the gloss that names the tool asked for.
    let uncapped = ranked(CjkIdfCap::Off);
    assert!(uncapped[0].ends_with("-trending"), "{uncapped:?}");
    // As rare as "get": the badge tool first.
    assert_eq!(ranked(CjkIdfCap::CommonestSense)[0], "award_details");
    // A Chinese catalog: the term's own rarity counts (no English text to compare with).
    let chinese = [
        tool("get-weibo-trending", "trends", "获取微博热搜榜"),
        tool("badge.get", "admin", "获取勋章详情"),
        tool("badge.create", "admin", "创建勋章"),
    ];
    let mut idx = SearchIndex::new();
    idx.set_language_bridge(Some(bridge.clone()));
    for t in &chinese {
        put(&mut idx, t);
    }
    let mut plain = SearchIndex::with_tuning(Tuning {
        cjk_idf_cap: CjkIdfCap::Off,
        ..Tuning::default()
    });
    plain.set_language_bridge(Some(bridge));
    for t in &chinese {
        put(&mut plain, t);
    }
    let opts = SearchOptions::default();
    assert_eq!(
        idx.search("获取勋章", &opts).unwrap(),
        plain.search("获取勋章", &opts).unwrap()
    );
}

/// Glosses are terms of their own: a Chinese request (whose own glosses never read them) and
/// every typed word's rarity score as if no description were glossed.
#[test]
fn glossed_descriptions_leave_chinese_requests_as_they_were() {
    let bridge = std::sync::Arc::new(
        bridge::LanguageBridge::parse("消息\tnews message\n撤回\trecall\n发送\tsend\n").unwrap(),
    );
    let tools = [
        tool(
            "im.message.recall",
            "im",
            "[Feishu/Lark] 撤回消息 recall a message",
        ),
        tool(
            "im.message.send",
            "im",
            "[Feishu/Lark] 发送消息 send a message",
        ),
        tool("news_feed", "news", "Latest news headlines"),
    ];
    // Query glosses only (the dictionary came after indexing) vs query and description glosses.
    let mut late = index(&tools);
    late.set_language_bridge(Some(bridge.clone()));
    let mut early = SearchIndex::new();
    early.set_language_bridge(Some(bridge));
    for t in &tools {
        put(&mut early, t);
    }
    early.store.check_invariants();
    let scored = |idx: &SearchIndex, query: &str| -> Vec<(String, f64)> {
        let opts = SearchOptions {
            limit: 10,
            ..Default::default()
        };
        (idx.search(query, &opts).unwrap().into_iter())
            .map(|h| (h.name, h.score))
            .collect()
    };
    for query in ["撤回消息", "发送消息", "消息"] {
        assert_eq!(scored(&early, query), scored(&late, query), "{query}");
    }
    // A typed word now also matches the glosses, and its own rarity is unchanged.
    assert_eq!(q(&early, "send news")[0], "im.message.send");
}
