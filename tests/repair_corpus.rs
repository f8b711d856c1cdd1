//! The repair corpus (`fixtures/repair_corpus.json`, built by `scripts/build_repair_corpus.mjs`):
//! malformed calls against real MCP tool schemas, each repaired exactly as expected, or not at all.

use std::collections::HashMap;

use serde_json::Value;
use toolreg::repair::{RepairTool, RepairToolset};
use toolreg::schema::CompiledSchema;

fn corpus() -> Value {
    serde_json::from_str(include_str!("../fixtures/repair_corpus.json")).expect("corpus is JSON")
}

fn toolsets(corpus: &Value) -> HashMap<String, RepairToolset> {
    corpus["toolsets"]
        .as_object()
        .expect("toolsets")
        .iter()
        .map(|(name, tools)| {
            let tools = tools
                .as_array()
                .expect("tool list")
                .iter()
                .map(|t| {
                    RepairTool::new(
                        t["name"].as_str().expect("name"),
                        t["inputSchema"].clone(),
                        t["needsApproval"].as_bool().unwrap_or(false),
                    )
                })
                .collect();
            (name.clone(), RepairToolset::new(tools))
        })
        .collect()
}

#[test]
fn every_corpus_case_is_repaired_as_expected() {
    let corpus = corpus();
    let sets = toolsets(&corpus);
    let cases = corpus["cases"].as_array().expect("cases");
    assert!(
        cases.len() >= 300,
        "the corpus has only {} cases",
        cases.len()
    );
    let mut failures = Vec::new();
    let (mut repaired, mut refused) = (0, 0);
    for case in cases {
        let id = &case["id"];
        let set = &sets[case["toolset"].as_str().expect("toolset")];
        let tool_name = case["toolName"].as_str().expect("toolName");
        let input = case["input"].as_str().expect("input");
        match (&case["expected"], set.repair(tool_name, input)) {
            (Value::Null, Err(_)) => refused += 1,
            (Value::Null, Ok(got)) => failures.push(format!(
                "{id}: must not be repaired, got {} {} via {:?}",
                got.tool_name, got.input, got.steps
            )),
            (expected, Ok(got))
                if expected["toolName"] == got.tool_name.as_str()
                    && expected["input"] == got.input =>
            {
                repaired += 1
            }
            (expected, Ok(got)) => failures.push(format!(
                "{id}: expected {expected}, got {} {}",
                got.tool_name, got.input
            )),
            (expected, Err(failure)) => {
                failures.push(format!("{id}: expected {expected}, gave up: {failure}"))
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    assert!(repaired > 0 && refused > 0);
}

/// The fixture itself is sound: every expected input matches its tool's schema.
#[test]
fn corpus_expectations_match_their_schemas() {
    let corpus = corpus();
    let schemas: HashMap<(String, String), Value> = corpus["toolsets"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(set, tools)| {
            tools.as_array().unwrap().iter().map(move |t| {
                (
                    (set.clone(), t["name"].as_str().unwrap().to_owned()),
                    t["inputSchema"].clone(),
                )
            })
        })
        .collect();
    for case in corpus["cases"].as_array().unwrap() {
        let expected = &case["expected"];
        if expected.is_null() {
            continue;
        }
        let key = (
            case["toolset"].as_str().unwrap().to_owned(),
            expected["toolName"].as_str().unwrap().to_owned(),
        );
        let compiled = CompiledSchema::compile(&schemas[&key]).unwrap();
        assert!(
            compiled.validate(&expected["input"]).is_ok(),
            "{}: expected input {} breaks the schema",
            case["id"],
            expected["input"]
        );
    }
}
