use serde_json::{Value, json};

use super::*;

fn toolset() -> RepairToolset {
    let read = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"path": {"type": "string"}, "head": {"type": "number"}},
        "required": ["path"]
    });
    let edit = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "edits": {"type": "array", "items": {
                "type": "object",
                "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                "required": ["oldText", "newText"]
            }},
            "dryRun": {"type": "boolean", "default": false}
        },
        "required": ["path", "edits"],
        "additionalProperties": false
    });
    let envelope_owner = json!({
        "type": "object",
        "properties": {"input": {"type": "object"}},
        "required": ["input"]
    });
    RepairToolset::new(vec![
        RepairTool::new("read_text_file", read, false),
        RepairTool::new("mcp__fs__edit_file", edit, false),
        RepairTool::new(
            "delete_file",
            json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            true,
        ),
        RepairTool::new("transform", envelope_owner, false),
        RepairTool::new(
            "remote",
            json!({"$ref": "https://example.com/schema.json"}),
            false,
        ),
    ])
}

fn steps(repaired: &Repaired) -> Vec<String> {
    repaired.steps.iter().map(ToString::to_string).collect()
}

#[test]
fn repairs_name_and_arguments_together() {
    let set = toolset();
    let repaired = set
        .repair(
            "edit_file",
            "```json\n{path: '/a.txt', edits: {oldText: 'x', newText: 'y'}, dryRun: 'true',}\n```",
        )
        .unwrap();
    assert_eq!(repaired.tool_name, "mcp__fs__edit_file");
    assert_eq!(
        repaired.input,
        json!({"path": "/a.txt", "edits": [{"oldText": "x", "newText": "y"}], "dryRun": true})
    );
    let mut got = steps(&repaired);
    got[1..].sort();
    assert_eq!(
        got,
        [
            "name:prefix edit_file -> mcp__fs__edit_file",
            "coerce:string-to-boolean at $.dryRun",
            "coerce:wrap-in-array at $.edits",
            "json:code-fence",
            "json:single-quotes",
            "json:trailing-comma",
            "json:unquoted-key",
        ]
    );
}

#[test]
fn unwraps_double_encoding_and_envelopes() {
    let set = toolset();
    let encoded = serde_json::to_string(&json!({"path": "/x", "head": 3})).unwrap();
    let double = Value::String(encoded.clone()).to_string();
    let repaired = set.repair("read_text_file", &double).unwrap();
    assert_eq!(repaired.input, json!({"path": "/x", "head": 3}));
    assert_eq!(steps(&repaired), ["unwrap:double-encoded"]);

    for envelope in [
        json!({"arguments": {"path": "/x", "head": 3}}),
        json!({"parameters": encoded}),
        json!({"name": "read_text_file", "arguments": {"path": "/x", "head": "3"}}),
    ] {
        let repaired = set.repair("read_text_file", &envelope.to_string()).unwrap();
        assert_eq!(
            repaired.input,
            json!({"path": "/x", "head": 3}),
            "{envelope}"
        );
    }
    // The envelope names another tool: not ours to unwrap.
    let other = json!({"name": "delete_file", "arguments": {"path": "/x"}});
    assert_eq!(
        set.repair("read_text_file", &other.to_string())
            .unwrap_err()
            .reason
            .code(),
        "still-invalid"
    );
    // `transform` has an `input` property: its `{"input": ...}` is real, not an envelope.
    let err = set.repair("transform", r#"{"input": "text"}"#).unwrap_err();
    assert_eq!(err.reason.code(), "still-invalid");
    assert_eq!(err.resolved_tool.as_deref(), Some("transform"));
}

#[test]
fn never_invents_data() {
    let set = toolset();
    // A required property is missing: no value to coerce from.
    let err = set.repair("read_text_file", r#"{"head": 3}"#).unwrap_err();
    assert_eq!(err.reason.code(), "still-invalid");
    assert!(err.to_string().contains("path"), "{err}");
    // `null` for a required property is not dropped.
    let err = set
        .repair("read_text_file", r#"{"path": null}"#)
        .unwrap_err();
    assert_eq!(err.reason.code(), "still-invalid");
    // "ten" is not a number.
    let err = set
        .repair("read_text_file", r#"{"path": "/x", "head": "ten"}"#)
        .unwrap_err();
    assert_eq!(err.reason.code(), "still-invalid");
    // An extra property under additionalProperties:false stays (and fails).
    let err = set
        .repair(
            "mcp__fs__edit_file",
            r#"{"path": "/x", "edits": [], "force": true}"#,
        )
        .unwrap_err();
    assert_eq!(err.reason.code(), "still-invalid");
}

#[test]
fn gives_up_with_a_typed_reason() {
    let set = toolset();
    let code = |name: &str, input: &str| set.repair(name, input).unwrap_err().reason.code();
    assert_eq!(code("web_search", "{}"), "unknown-tool");
    assert_eq!(code("deleteFile", r#"{"path": "/x"}"#), "approval-gated");
    assert_eq!(code("read_text_file", "not json at all"), "unreadable");
    assert_eq!(
        code("read_text_file", r#"{"path": "/x"}"#),
        "nothing-to-repair"
    );
    assert_eq!(code("remote", "{}"), "schema-unusable");
    let deep = format!(
        "{{\"path\": \"/x\", \"head\": {}1{}}}",
        "[".repeat(17),
        "]".repeat(17)
    );
    assert_eq!(code("read_text_file", &deep), "too-deep");
    // The exact name of a gated tool is fine.
    let repaired = set.repair("delete_file", "{'path': '/x'}").unwrap();
    assert_eq!(repaired.input, json!({"path": "/x"}));
}

#[test]
fn validate_checks_2020_12_keywords() {
    let tool = RepairTool::new(
        "tags",
        json!({
            "type": "object",
            "properties": {"tags": {"type": "array", "uniqueItems": true, "contains": {"const": "main"}}},
            "unevaluatedProperties": false
        }),
        false,
    );
    assert!(tool.validate(&json!({"tags": ["main", "x"]})).is_ok());
    for bad in [
        json!({"tags": ["main", "main"]}),
        json!({"tags": ["x"]}),
        json!({"tags": ["main"], "extra": 1}),
    ] {
        assert_eq!(
            tool.validate(&bad).unwrap_err().code(),
            "still-invalid",
            "{bad}"
        );
    }
}
