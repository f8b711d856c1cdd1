//! Property-based fuzzing (stable Rust, proptest) of every reader of untrusted text: the lenient
//! JSON reader and schema coercion of tool-call repair, the schema outline reader and validator
//! compiler (MCP servers send arbitrary schemas) and deep arguments against recursive unions
//! (the validator's exponential case), the search query syntax (`select:`, `+word`,
//! regex mode) and MCP wire ids.
//!
//! `npm test` runs each property for proptest's default 256 cases. A long run:
//! `FUZZ_SECONDS=600 node scripts/cargo.mjs test --test fuzz -- --nocapture` repeats each target
//! with fresh seeds until that many seconds have passed and prints how many inputs it tried
//! (`PROPTEST_CASES` sets the batch size).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};
use serde_json::{Map, Value, json};

use toolreg::mcp::build_mcp_tool_wire_id;
use toolreg::registry::{Defer, EntrySpec, Registry, check_tool_name};
use toolreg::repair::coerce::coerce;
use toolreg::repair::lenient::read_lenient;
use toolreg::repair::{RepairTool, RepairToolset};
use toolreg::schema::{CompiledSchema, outline};
use toolreg::search::{SearchMode, SearchOptions};

/// Runs `test` over `strategy`: one batch, or batches with fresh seeds for `FUZZ_SECONDS`.
fn fuzz<S: Strategy>(
    target: &str,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let seconds: u64 = std::env::var("FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let config = Config {
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..Config::default()
    };
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut tried = 0u64;
    loop {
        let mut runner = TestRunner::new(config.clone());
        if let Err(failure) = runner.run(&strategy, &test) {
            panic!("fuzz target {target} failed after {tried} inputs: {failure}");
        }
        tried += u64::from(config.cases);
        if Instant::now() >= deadline {
            break;
        }
    }
    if seconds > 0 {
        eprintln!("fuzz {target}: {tried} inputs, no failure");
    }
}

/// Arbitrary JSON values, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "[ -~]{0,12}".prop_map(Value::String),
        "\\PC{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,6}", inner), 0..5)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Text that looks like model output: valid JSON with edits (cut, insertions of the characters
/// the lenient reader treats specially), or soup of those characters.
fn json_ish_text() -> impl Strategy<Value = String> {
    let soup = "[{}\\[\\]\"',:a-zA-Z0-9 \\n\\t\\\\/*#.+eE“”‘’`-]{0,80}";
    let edited = (
        json_value(),
        prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                "[{}\\[\\]\"',:\\\\/*#`“”\\n ]{0,3}",
            ),
            0..4,
        ),
        any::<prop::sample::Index>(),
        any::<bool>(),
    )
        .prop_map(|(value, edits, cut, truncate)| {
            let mut text = if cut.index(2) == 0 {
                serde_json::to_string_pretty(&value).unwrap()
            } else {
                value.to_string()
            };
            for (at, insert) in edits {
                let chars: Vec<char> = text.chars().collect();
                let i = at.index(chars.len() + 1);
                text = chars[..i].iter().collect::<String>()
                    + &insert
                    + &chars[i..].iter().collect::<String>();
            }
            if truncate {
                let chars: Vec<char> = text.chars().collect();
                text = chars[..cut.index(chars.len() + 1)].iter().collect();
            }
            text
        });
    prop_oneof![
        2 => edited,
        1 => soup,
        1 => "\\PC{0,40}",
        1 => Just("```json\n{".to_owned()).prop_flat_map(|fence| "[\\[{'\"a-z:, ]{0,30}".prop_map(move |s| format!("{fence}{s}"))),
    ]
}

/// Arbitrary (often odd) JSON Schemas: types, properties, items, enums, unions, `$ref`s
/// (including cycles and dangling ones), boolean schemas.
fn schema_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!(true)),
        Just(json!(false)),
        Just(json!({})),
        prop::sample::select(vec![
            "string", "integer", "number", "boolean", "null", "array", "object"
        ])
        .prop_map(|t| json!({ "type": t })),
        Just(json!({"type": ["string", "null"]})),
        Just(json!({"enum": ["asc", "DESC", 1, null]})),
        Just(json!({"const": "x"})),
        Just(json!({"$ref": "#"})),
        Just(json!({"$ref": "#/$defs/missing"})),
        Just(json!({"$ref": "https://example.com/s.json"})),
        Just(json!({"type": "string", "pattern": "^[a-z]+$", "minLength": 2})),
        Just(json!({"type": "integer", "minimum": 0, "maximum": 10})),
        Just(json!({"type": 12})),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(("[a-z]{1,4}", inner.clone()), 0..4).prop_map(|props| {
                let required: Vec<Value> = props.iter().take(1).map(|(k, _)| json!(k)).collect();
                json!({"type": "object", "properties": props.into_iter().collect::<Map<_, _>>(), "required": required})
            }),
            inner.clone().prop_map(|items| json!({"type": "array", "items": items})),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|branches| json!({ "anyOf": branches })),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|branches| json!({ "oneOf": branches })),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|branches| json!({ "allOf": branches })),
            inner.prop_map(|def| json!({"$defs": {"d": def}, "$ref": "#/$defs/d", "uniqueItems": true})),
        ]
    })
}

#[test]
fn fuzz_lenient_reader() {
    fuzz("lenient reader", json_ish_text(), |text| {
        match read_lenient(&text) {
            Ok(read) => {
                // The value is plain JSON: it writes and reads back unchanged.
                let written = read.value.to_string();
                let again: Value = serde_json::from_str(&written)
                    .map_err(|e| TestCaseError::fail(format!("{e}")))?;
                prop_assert_eq!(&again, &read.value);
                // Strict JSON is read exactly as serde_json reads it, with nothing forgiven.
                if let Ok(strict) = serde_json::from_str::<Value>(&text) {
                    prop_assert_eq!(read.value, strict);
                    prop_assert!(read.fixes.is_empty());
                }
            }
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
        Ok(())
    });
}

#[test]
fn fuzz_coercion_and_repair() {
    fuzz(
        "coercion and repair",
        (schema_value(), json_value(), json_ish_text()),
        |(schema, value, text)| {
            let mut coerced = value.clone();
            coerce(&schema, &mut coerced);
            serde_json::from_str::<Value>(&coerced.to_string())
                .map_err(|e| TestCaseError::fail(format!("{e}")))?;

            let set = RepairToolset::new(vec![RepairTool::new("fuzz_tool", schema.clone(), false)]);
            for input in [text, value.to_string()] {
                if let Ok(repaired) = set.repair("fuzz_tool", &input) {
                    // Nothing leaves the pass unvalidated.
                    let compiled = CompiledSchema::compile(&schema)
                        .map_err(|e| TestCaseError::fail(format!("{e}")))?;
                    prop_assert!(
                        compiled.validate(&repaired.input).is_ok(),
                        "{} -> {}",
                        input,
                        repaired.input
                    );
                    prop_assert!(!repaired.steps.is_empty());
                }
            }
            Ok(())
        },
    );
}

#[test]
fn fuzz_schema_outline_and_compile() {
    let text = prop_oneof![schema_value().prop_map(|s| s.to_string()), json_ish_text(),];
    fuzz(
        "schema outline and compile",
        (text, json_value()),
        |(text, instance)| {
            let _ = outline(&text);
            if let Ok(schema) = serde_json::from_str::<Value>(&text)
                && let Ok(compiled) = CompiledSchema::compile(&schema)
            {
                let _ = compiled.validate(&instance);
                let _ = compiled.parse(&instance);
            }
            Ok(())
        },
    );
}

/// Schemas whose unions recurse (the validator's exponential case) against values nested up to
/// 40 deep: every check must come back (refused or judged), never run for minutes.
#[test]
fn fuzz_deep_values_against_recursive_unions() {
    let branch = prop::sample::select(vec![
        json!({"type": "array", "items": {"$ref": "#/$defs/n"}}),
        json!({"type": "array", "items": {"$ref": "#/$defs/n"}, "minItems": 1}),
        json!({"type": "object", "additionalProperties": {"$ref": "#/$defs/n"}}),
        json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}}),
        json!({"$ref": "#/$defs/n", "maxItems": 5}),
        json!({"type": "string"}),
    ]);
    let schema = (
        prop::collection::vec(branch, 1..5),
        prop::sample::select(vec!["anyOf", "oneOf", "allOf"]),
    )
        .prop_map(
            |(branches, union)| json!({"$defs": {"n": { union: branches }}, "$ref": "#/$defs/n"}),
        );
    let value = (
        0usize..40,
        prop::collection::vec(any::<bool>(), 40),
        "[a-z]{0,3}",
    )
        .prop_map(|(depth, as_object, leaf)| {
            (0..depth).fold(json!(leaf), |v, level| {
                if as_object[level] {
                    json!({ "a": v })
                } else {
                    json!([v])
                }
            })
        });
    fuzz(
        "deep values against recursive unions",
        (schema, value),
        |(schema, value)| {
            let compiled = CompiledSchema::compile(&schema).expect("the generated schemas compile");
            let _ = compiled.validate(&value);
            let _ = compiled.parse(&value);
            Ok(())
        },
    );
}

fn search_registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut registry = Registry::new();
        let listing: Value =
            serde_json::from_str(include_str!("../fixtures/github.tools_list.json")).unwrap();
        for tool in listing["tools"].as_array().unwrap() {
            let spec = EntrySpec {
                name: tool["name"].as_str().unwrap().to_owned(),
                namespace: "mcp:github".to_owned(),
                namespace_label: None,
                description: tool["description"].as_str().unwrap_or("").to_owned(),
                defer: Defer::Auto,
            };
            registry
                .register(spec, Some(tool["inputSchema"].clone()))
                .unwrap();
        }
        registry
    })
}

#[test]
fn fuzz_search_query_syntax() {
    let words = prop::sample::select(vec![
        "select:",
        "select:create_issue,",
        "+",
        "+issue",
        "\"",
        "*",
        "(",
        ")",
        "[",
        "]",
        "|",
        "\\",
        "issue",
        "pull",
        "create_issue",
        "+1234567",
        ".*",
        "^",
        "$",
        "{2,}",
        "(?i)",
        "\u{0}",
        "北京",
    ]);
    let query = prop_oneof![
        prop::collection::vec(words, 0..6).prop_map(|w| w.join(" ")),
        prop::collection::vec(
            prop::sample::select(vec!["select:", "+", "a", ",", " ", "(", "*", "?"]),
            0..10
        )
        .prop_map(|w| w.concat()),
        "\\PC{0,60}",
    ];
    fuzz(
        "search query syntax",
        (query, any::<bool>(), 0usize..8),
        |(query, regex, limit)| {
            let registry = search_registry();
            let opts = SearchOptions {
                limit,
                mode: if regex {
                    SearchMode::Regex
                } else {
                    SearchMode::Bm25
                },
                ..SearchOptions::default()
            };
            match registry.search(&query, &opts) {
                Ok(hits) => {
                    for hit in &hits {
                        prop_assert!(registry.get(&hit.name).is_some());
                        prop_assert!(hit.score.is_finite());
                    }
                }
                Err(error) => prop_assert_eq!(error.code(), "TOOLREG_INVALID_QUERY", "{}", error),
            }
            Ok(())
        },
    );
}

#[test]
fn fuzz_wire_ids() {
    let text = prop_oneof!["\\PC{0,80}", "[a-zA-Z0-9 _.-]{0,40}", ".{0,10}"];
    fuzz(
        "wire id",
        (text.clone(), text.clone(), text),
        |(server_id, server_name, tool_name)| {
            let id = build_mcp_tool_wire_id(&server_id, &server_name, &tool_name);
            prop_assert!(id.len() <= 64, "{} is {} long", id, id.len());
            prop_assert!(
                id.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                "{}",
                id
            );
            prop_assert!(check_tool_name(&id).is_ok());
            prop_assert_eq!(
                &id,
                &build_mcp_tool_wire_id(&server_id, &server_name, &tool_name)
            );
            Ok(())
        },
    );
}
