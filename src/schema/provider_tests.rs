use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::*;
use crate::schema::samples::samples;
use crate::schema::{CompiledSchema, outside_subset};

fn gemini(schema: Value) -> ProviderSchema {
    provider_schema(&schema, Provider::Gemini).expect("schema")
}

fn strict(schema: Value) -> ProviderSchema {
    provider_schema(&schema, Provider::OpenAiStrict).expect("schema")
}

fn assert_in_subset(converted: &ProviderSchema, provider: Provider) {
    let found = outside_subset(&converted.schema, provider);
    assert!(found.is_empty(), "{found:?} in {}", converted.schema);
}

#[test]
fn provider_strings_pick_the_family() {
    assert_eq!(
        Provider::for_model("google.generative-ai", false),
        Provider::Gemini
    );
    assert_eq!(
        Provider::for_model("google.vertex.chat", false),
        Provider::Gemini
    );
    assert_eq!(
        Provider::for_model("openai.responses", true),
        Provider::OpenAiStrict
    );
    assert_eq!(
        Provider::for_model("openai.chat", false),
        Provider::PassThrough
    );
    assert_eq!(
        Provider::for_model("anthropic.messages", false),
        Provider::Anthropic
    );
    assert_eq!(
        Provider::for_model("mistral.chat", true),
        Provider::PassThrough
    );
}

#[test]
fn not_a_schema_is_an_error() {
    assert_eq!(
        provider_schema(&json!("x"), Provider::Gemini),
        Err(ProviderSchemaError::NotASchema { found: "a string" })
    );
}

#[test]
fn pass_through_returns_the_schema_unchanged() {
    let schema = json!({"$ref": "#/$defs/a", "$defs": {"a": {"type": "object"}}});
    let out = provider_schema(&schema, Provider::PassThrough).unwrap();
    assert_eq!(out.schema, schema);
    assert!(out.rewrites.is_empty());
}

#[test]
fn gemini_inlines_local_refs_and_drops_defs() {
    let out = gemini(json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/definitions/B", "description": "the b"}},
        "$defs": {"A": {"type": "string"}},
        "definitions": {"B": {"type": "integer"}}
    }));
    assert_eq!(
        out.schema,
        json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer", "description": "the b"}}})
    );
    assert_eq!(out.rewrites[&Rewrite::RefInlined], 2);
    assert_eq!(out.rewrites[&Rewrite::DefsDropped], 2);
    assert_eq!(out.effect(), Effect::Exact);
    assert_in_subset(&out, Provider::Gemini);
}

#[test]
fn ref_cycles_are_cut_with_a_note() {
    let out = gemini(json!({
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}}
    }));
    let cut = &out.schema["properties"]["node"]["properties"]["child"]["properties"]["child"];
    assert_eq!(cut["type"], "object");
    assert!(
        cut["description"].as_str().unwrap().contains("Recursive"),
        "{cut}"
    );
    assert_eq!(out.rewrites[&Rewrite::RefCycleCut], 1);
    assert_in_subset(&out, Provider::Gemini);
    // The root reference `#` is a cycle too.
    let root = gemini(json!({"type": "object", "properties": {"next": {"$ref": "#"}}}));
    assert_eq!(root.rewrites[&Rewrite::RefCycleCut], 1);
}

#[test]
fn remote_refs_are_never_fetched() {
    let out = gemini(
        json!({"type": "object", "properties": {"x": {"$ref": "https://example.com/s.json"}}}),
    );
    let x = &out.schema["properties"]["x"];
    assert!(
        x["description"].as_str().unwrap().contains("not fetched"),
        "{x}"
    );
    assert_eq!(out.rewrites[&Rewrite::RefRemote], 1);
    assert_eq!(out.effect(), Effect::Widens);
}

#[test]
fn gemini_nullable_from_unions_and_type_lists() {
    let out = gemini(json!({"type": "object", "properties": {
        "a": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "A"},
        "b": {"type": ["integer", "null"]},
        "c": {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}
    }}));
    let p = &out.schema["properties"];
    assert_eq!(
        p["a"],
        json!({"type": "string", "nullable": true, "description": "A"})
    );
    assert_eq!(p["b"], json!({"type": "integer", "nullable": true}));
    assert_eq!(
        p["c"],
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": true})
    );
    assert_eq!(out.effect(), Effect::Exact);
    assert_in_subset(&out, Provider::Gemini);
}

#[test]
fn gemini_const_and_enums() {
    let out = gemini(json!({"type": "object", "properties": {
        "kind": {"const": "issue"},
        "level": {"type": "integer", "enum": [1, 2, 3]},
        "mode": {"enum": ["a", "b", null]}
    }}));
    let p = &out.schema["properties"];
    assert_eq!(p["kind"], json!({"type": "string", "enum": ["issue"]}));
    assert_eq!(
        p["level"],
        json!({"type": "integer", "description": "One of: 1, 2, 3."})
    );
    assert_eq!(
        p["mode"],
        json!({"type": "string", "enum": ["a", "b"], "nullable": true})
    );
    assert_in_subset(&out, Provider::Gemini);
}

#[test]
fn gemini_moves_unsupported_keywords_into_the_description() {
    let out = gemini(
        json!({"type": "object", "additionalProperties": {"type": "string"}, "properties": {
            "when": {"type": "string", "format": "date-time"},
            "site": {"type": "string", "format": "uri", "description": "Page"},
            "limit": {"type": "integer", "default": 10, "minimum": 1, "examples": [5]},
            "flags": {"type": "object", "additionalProperties": false, "properties": {}}
        }}),
    );
    let s = &out.schema;
    assert_eq!(
        s["properties"]["when"],
        json!({"type": "string", "format": "date-time"})
    );
    assert_eq!(
        s["properties"]["site"],
        json!({"type": "string", "description": "Page Format: uri."})
    );
    assert_eq!(
        s["properties"]["limit"],
        json!({"type": "integer", "description": "Default: 10. minimum: 1."})
    );
    assert_eq!(s["description"], "Extra properties: {\"type\":\"string\"}.");
    assert_eq!(
        s["properties"]["flags"]["description"],
        "No other properties."
    );
    for rewrite in [
        Rewrite::FormatDescribed,
        Rewrite::DefaultDescribed,
        Rewrite::KeywordDescribed,
        Rewrite::AnnotationDropped,
        Rewrite::AdditionalPropertiesRemoved,
        Rewrite::AdditionalPropertiesSchemaDescribed,
    ] {
        assert!(
            out.rewrites.contains_key(&rewrite),
            "{rewrite:?}: {:?}",
            out.rewrites
        );
    }
    assert_in_subset(&out, Provider::Gemini);
}

#[test]
fn gemini_flattens_unions_under_items() {
    let out = gemini(json!({"type": "object", "properties": {
        "ops": {"type": "array", "items": {"anyOf": [
            {"type": "object", "properties": {"op": {"const": "add"}, "value": {"type": "string"}}, "required": ["op", "value"]},
            {"type": "object", "properties": {"op": {"const": "remove"}}, "required": ["op"]}
        ]}},
        "ids": {"type": "array", "items": {"anyOf": [{"type": "string", "enum": ["a"]}, {"type": "string", "enum": ["b"]}]}},
        "deep": {"type": "array", "items": {"type": "object", "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "number"}]}}}}
    }}));
    let items = &out.schema["properties"]["ops"]["items"];
    assert_eq!(items["type"], "object");
    assert_eq!(items["required"], json!(["op"]));
    assert!(items["properties"].get("value").is_some());
    assert_eq!(items["description"], "Each one of: {op, value} | {op}.");
    assert_eq!(
        out.schema["properties"]["ids"]["items"]["enum"],
        json!(["a", "b"])
    );
    assert!(
        out.schema["properties"]["deep"]["items"]["properties"]["v"]
            .get("anyOf")
            .is_none()
    );
    assert_eq!(out.rewrites[&Rewrite::ItemsUnionFlattened], 3);
    assert_in_subset(&out, Provider::Gemini);
}

#[test]
fn all_of_merges_when_simple_and_notes_clashes() {
    let out = gemini(json!({"allOf": [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"properties": {"b": {"type": "integer"}}, "required": ["b"]}
    ]}));
    assert_eq!(
        out.schema,
        json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a", "b"]})
    );
    assert_eq!(out.effect(), Effect::Exact);
    let clash = gemini(json!({"allOf": [{"type": "string", "pattern": "^a"}, {"pattern": "b$"}]}));
    assert_eq!(clash.rewrites[&Rewrite::AllOfConflict], 1);
    assert!(
        clash.schema["description"].as_str().unwrap().contains("b$"),
        "{}",
        clash.schema
    );
}

#[test]
fn openai_strict_closes_objects_and_requires_every_property() {
    let out = strict(json!({"type": "object", "properties": {
        "q": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "default": 5},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
        "opts": {"type": "object"},
        "any": {}
    }, "required": ["q"]}));
    let s = &out.schema;
    assert_eq!(s["additionalProperties"], false);
    assert_eq!(s["required"], json!(["any", "limit", "opts", "q", "tags"]));
    assert_eq!(
        s["properties"]["q"],
        json!({"type": "string", "description": "minLength: 1."})
    );
    assert_eq!(
        s["properties"]["limit"],
        json!({"type": ["integer", "null"], "description": "Default: 5."})
    );
    assert_eq!(s["properties"]["tags"]["type"], json!(["array", "null"]));
    assert_eq!(
        s["properties"]["opts"],
        json!({"type": ["object", "null"], "properties": {}, "required": [], "additionalProperties": false})
    );
    assert_eq!(
        s["properties"]["any"]["type"],
        json!(["string", "number", "boolean", "null"])
    );
    assert_in_subset(&out, Provider::OpenAiStrict);
}

#[test]
fn openai_strict_nullable_enum_and_union_properties() {
    let out = strict(json!({"type": "object", "properties": {
        "mode": {"type": "string", "enum": ["x", "y"]},
        "either": {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "E"},
        "when": {"type": "string", "format": "uri"}
    }}));
    let p = &out.schema["properties"];
    assert_eq!(
        p["mode"],
        json!({"type": ["string", "null"], "enum": ["x", "y", null]})
    );
    assert_eq!(
        p["either"],
        json!({"description": "E", "anyOf": [{"anyOf": [{"type": "string"}, {"type": "integer"}]}, {"type": "null"}]})
    );
    assert_eq!(p["when"]["description"], "Format: uri.");
    assert_in_subset(&out, Provider::OpenAiStrict);
}

#[test]
fn strip_strict_nulls_restores_optional_absence() {
    let original = json!({"type": "object", "properties": {
        "q": {"type": "string"},
        "n": {"type": ["integer", "null"]},
        "inner": {"type": "object", "properties": {"x": {"type": "string"}}}
    }, "required": ["q"]});
    let mut input = json!({"q": "a", "n": null, "inner": {"x": null}, "other": null});
    strip_strict_nulls(&original, &mut input);
    assert_eq!(
        input,
        json!({"q": "a", "n": null, "inner": {}, "other": null})
    );
}

#[test]
fn anthropic_only_types_the_root() {
    let schema =
        json!({"properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"type": "string"}}});
    let out = provider_schema(&schema, Provider::Anthropic).unwrap();
    assert_eq!(out.schema["type"], "object");
    assert_eq!(out.schema["properties"], schema["properties"]);
    assert_in_subset(&out, Provider::Anthropic);
}

#[test]
fn checker_flags_what_the_providers_reject() {
    let raw = json!({"type": "object", "$defs": {}, "properties": {
        "a": {"$ref": "#/$defs/x"},
        "l": {"type": "array", "items": {"anyOf": [{"type": "string"}]}},
        "d": {"type": "string", "default": "x", "format": "uri"}
    }, "additionalProperties": false});
    let gemini: Vec<String> = outside_subset(&raw, Provider::Gemini)
        .into_iter()
        .map(|v| v.construct)
        .collect();
    for construct in [
        "keyword $defs",
        "keyword $ref",
        "anyOf under items",
        "keyword default",
        "keyword additionalProperties",
    ] {
        assert!(
            gemini.iter().any(|c| c == construct),
            "{construct} not in {gemini:?}"
        );
    }
    assert!(gemini.iter().any(|c| c.starts_with("format")), "{gemini:?}");
    let openai: Vec<String> = outside_subset(&raw, Provider::OpenAiStrict)
        .into_iter()
        .map(|v| v.construct)
        .collect();
    assert!(
        openai.iter().any(|c| c == "property a not in required"),
        "{openai:?}"
    );
    assert!(openai.iter().any(|c| c == "keyword default"), "{openai:?}");
    assert!(outside_subset(&json!({}), Provider::Anthropic).len() == 1);
}

// ---- the corpus: real MCP tool schemas, every provider ----

/// Reads back what a provider means by its schema, as JSON Schema, so the project's validator
/// can judge it: Gemini's OpenAPI `nullable: true` admits `null` as well.
fn read_back(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out: Map<String, Value> = map
                .iter()
                .filter(|(k, _)| *k != "nullable")
                .map(|(k, v)| {
                    let v = match k.as_str() {
                        "properties" => Value::Object(
                            v.as_object()
                                .into_iter()
                                .flatten()
                                .map(|(n, s)| (n.clone(), read_back(s)))
                                .collect(),
                        ),
                        "items" => read_back(v),
                        "anyOf" => Value::Array(
                            v.as_array().into_iter().flatten().map(read_back).collect(),
                        ),
                        _ => v.clone(),
                    };
                    (k.clone(), v)
                })
                .collect();
            if map.get("nullable") == Some(&Value::Bool(true)) {
                let description = out.remove("description");
                let mut wrapper = Map::new();
                wrapper.insert(
                    "anyOf".into(),
                    json!([Value::Object(out), {"type": "null"}]),
                );
                if let Some(d) = description {
                    wrapper.insert("description".into(), d);
                }
                out = wrapper;
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// Strict mode's mapping of an original instance: absent optional properties are sent as null.
fn fill_nulls(converted: &Value, instance: &mut Value) {
    match instance {
        Value::Object(fields) => {
            let Some(properties) = converted.get("properties").and_then(Value::as_object) else {
                return;
            };
            for (name, schema) in properties {
                match fields.get_mut(name) {
                    Some(value) => fill_nulls(schema, value),
                    None => {
                        fields.insert(name.clone(), Value::Null);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = converted.get("items") {
                items.iter_mut().for_each(|v| fill_nulls(item, v));
            }
        }
        _ => {}
    }
}

#[derive(Default)]
struct CorpusReport {
    schemas: usize,
    uncompilable: usize,
    violations: Vec<String>,
    mismatches: Vec<String>,
    by_provider: BTreeMap<&'static str, ProviderCounts>,
}

#[derive(Default)]
struct ProviderCounts {
    rewritten: usize,
    exact: usize,
    narrows: usize,
    widens: usize,
    changes: usize,
    samples: usize,
    /// Rewrite name → how many schemas needed it.
    rewrites: BTreeMap<&'static str, usize>,
}

const PROVIDERS: [Provider; 3] = [
    Provider::Gemini,
    Provider::OpenAiStrict,
    Provider::Anthropic,
];

impl CorpusReport {
    fn check(&mut self, label: &str, schema: &Value) {
        self.schemas += 1;
        let original = CompiledSchema::compile(schema).ok();
        self.uncompilable += usize::from(original.is_none());
        let candidates = if original.is_some() {
            samples(schema)
        } else {
            Vec::new()
        };
        for provider in PROVIDERS {
            let Ok(converted) = provider_schema(schema, provider) else {
                self.violations.push(format!("{label}: not a schema"));
                continue;
            };
            let counts = self.by_provider.entry(provider.name()).or_default();
            for found in outside_subset(&converted.schema, provider) {
                self.violations.push(format!(
                    "{label} [{}] {}: {}",
                    provider.name(),
                    found.path,
                    found.construct
                ));
            }
            if !converted.rewrites.is_empty() {
                counts.rewritten += 1;
            }
            for rewrite in converted.rewrites.keys() {
                *counts.rewrites.entry(rewrite.name()).or_default() += 1;
            }
            let effect = converted.effect();
            match effect {
                Effect::Exact => counts.exact += 1,
                Effect::Narrows => counts.narrows += 1,
                Effect::Widens => counts.widens += 1,
                Effect::Changes => counts.changes += 1,
            }
            let (Some(before), false) = (&original, effect == Effect::Changes) else {
                continue;
            };
            let Ok(after) = CompiledSchema::compile(&read_back(&converted.schema)) else {
                self.mismatches.push(format!(
                    "{label} [{}]: converted schema does not compile",
                    provider.name()
                ));
                continue;
            };
            for sample in &candidates {
                counts.samples += 1;
                // Strict mode sends absent optional properties as null; the original reads them back.
                let mut forward = sample.clone();
                let mut backward = sample.clone();
                if provider == Provider::OpenAiStrict {
                    fill_nulls(&converted.schema, &mut forward);
                    strip_strict_nulls(schema, &mut backward);
                }
                let keeps_valid =
                    before.validate(sample).is_ok() <= after.validate(&forward).is_ok();
                let keeps_invalid =
                    after.validate(sample).is_ok() <= before.validate(&backward).is_ok();
                let fails = match effect {
                    Effect::Exact => !(keeps_valid && keeps_invalid),
                    Effect::Narrows => !keeps_invalid,
                    Effect::Widens => !keeps_valid,
                    Effect::Changes => false,
                };
                if fails {
                    self.mismatches.push(format!(
                        "{label} [{}] {effect:?}: {sample} (before {}, after {})",
                        provider.name(),
                        before.validate(sample).is_ok(),
                        after.validate(&forward).is_ok()
                    ));
                }
            }
        }
    }

    fn print(&self, source: &str) {
        println!(
            "provider schemas over {source}: {} schemas ({} not compilable by the validator)",
            self.schemas, self.uncompilable
        );
        for (provider, c) in &self.by_provider {
            println!(
                "  {provider}: {} rewritten; exact {}, narrows {}, widens {}, changes {}; {} sample checks",
                c.rewritten, c.exact, c.narrows, c.widens, c.changes, c.samples
            );
            for (rewrite, n) in &c.rewrites {
                println!("    {rewrite}: {n}");
            }
        }
    }

    fn assert_clean(&self) {
        let show = |list: &[String]| list.iter().take(15).cloned().collect::<Vec<_>>().join("\n");
        assert!(
            self.violations.is_empty(),
            "{} outside the subset:\n{}",
            self.violations.len(),
            show(&self.violations)
        );
        assert!(
            self.mismatches.is_empty(),
            "{} meaning changes:\n{}",
            self.mismatches.len(),
            show(&self.mismatches)
        );
    }
}

fn tool_schemas(list: &Value) -> Vec<(String, Value)> {
    list["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            (
                t["name"].as_str().unwrap_or("?").to_owned(),
                t["inputSchema"].clone(),
            )
        })
        .collect()
}

#[test]
fn fixture_schemas_convert_into_each_subset_with_the_same_meaning() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut report = CorpusReport::default();
    for entry in std::fs::read_dir(&dir).expect("fixtures") {
        let path = entry.expect("entry").path();
        if !path.to_string_lossy().ends_with(".tools_list.json") {
            continue;
        }
        let list: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        for (name, schema) in tool_schemas(&list) {
            report.check(&name, &schema);
        }
    }
    report.print("fixtures/*.tools_list.json");
    assert!(report.schemas > 40, "{} fixture schemas", report.schemas);
    assert!(report.by_provider["gemini"].rewritten > 0);
    report.assert_clean();
}

/// The shared data set's MCP catalogs (Toucan + Docker registry), as `bench/catalog.mjs` loads them.
fn shared_catalog() -> Option<Vec<(String, Value)>> {
    let dir = std::env::var_os("TOOLREG_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    let toucan =
        std::fs::read_to_string(dir.join("toucan-mcp-servers/servers_with_tools.jsonl")).ok()?;
    let docker = std::fs::read_to_string(dir.join("docker-mcp-registry/servers_tools.jsonl"))
        .unwrap_or_default();
    let mut schemas = Vec::new();
    for line in toucan
        .lines()
        .chain(docker.lines())
        .filter(|l| !l.trim().is_empty())
    {
        let server: Value = serde_json::from_str(line).ok()?;
        for tool in server["tools"].as_array().into_iter().flatten() {
            let schema = match tool.get("inputSchema") {
                Some(s) => s.clone(),
                None => docker_schema(tool),
            };
            schemas.push((tool["name"].as_str().unwrap_or("?").to_owned(), schema));
        }
    }
    Some(schemas)
}

/// Docker's own tool format lists arguments without required-ness (same mapping as bench/catalog.mjs).
fn docker_schema(tool: &Value) -> Value {
    let properties: Map<String, Value> = tool["arguments"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|arg| {
            let mut p = json!({"type": arg.get("type").cloned().unwrap_or(json!("string"))});
            if let Some(desc) = arg.get("desc") {
                p["description"] = desc.clone();
            }
            (arg["name"].as_str().unwrap_or("?").to_owned(), p)
        })
        .collect();
    json!({"type": "object", "properties": properties})
}

/// The whole shared catalog (~11k schemas, a few seconds in a debug build).
#[test]
fn shared_catalog_converts_into_each_subset_with_the_same_meaning() {
    let Some(schemas) = shared_catalog() else {
        println!(
            "shared catalog: skipped — ../shared/data is absent (set TOOLREG_DATA to its path)"
        );
        return;
    };
    let mut report = CorpusReport::default();
    for (name, schema) in &schemas {
        report.check(name, schema);
    }
    report.print("the shared catalog (Toucan + Docker MCP registry)");
    assert!(report.schemas > 10_000, "{} schemas", report.schemas);
    report.assert_clean();
}
