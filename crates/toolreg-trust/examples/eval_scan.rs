//! Evaluation of toolreg-trust: false positives on ~11k real MCP tools, detection on the attack
//! sets, a keyword baseline, cost, and digest stability.
//!
//! CARGO_TARGET_DIR=/work/target-trust cargo run --release -p toolreg-trust --example eval_scan
//!
//! Real catalogs come from `TOOLREG_SHARED_DATA` (default `../shared/data` from the repo root).
//! `EVAL_SHOW_WARNED=N` also lists the first N warned catalog tools.
//! `EVAL_DUMP=<file>` writes every digest, canonical text hash and finding of the catalogs and
//! the fixture sets to `<file>`, so an optimisation can be checked to change no result (`cmp`).

use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use toolreg_trust::{
    Level, PinnedServer, ScanContext, canonical_json, compare, digest, instructions_digest,
    scan_instructions, scan_tool, worst_level,
};

/// One real tool and where it came from.
struct CatalogTool {
    catalog: &'static str,
    server: String,
    tool: Value,
}

/// One hand-written case of the attack or benign sets.
struct Case {
    id: String,
    class: String,
    lang: String,
    tool: Option<Value>,
    instructions: Option<String>,
    other_servers_tools: Vec<(String, String)>,
}

/// The naive baseline: any of these words anywhere in the tool's text.
const BASELINE_WORDS: [&str; 14] = [
    "ignore",
    "secret",
    "password",
    "hidden",
    "important",
    "ssh",
    "private key",
    "do not tell",
    "忽略",
    "密码",
    "私钥",
    "秘密",
    "重要",
    "不要告诉",
];

fn main() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let repo_root = crate_dir.join("../..");
    let shared = std::env::var_os("TOOLREG_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root.join("../shared/data"));

    let catalog = load_catalogs(&shared);
    if catalog.is_empty() {
        println!(
            "No real catalogs under {} — skipping the catalog parts.",
            shared.display()
        );
    } else {
        catalog_report(&catalog);
    }

    let fixtures = crate_dir.join("fixtures");
    let load = |name: &str| (name.to_owned(), load_cases(&fixtures.join(name)));
    // Which set saw which rules (fixtures/README.md): judge generalisation on the last ones.
    let attack_sets = [
        (load("attacks.json"), "the rules were designed on this set"),
        (
            load("attacks-heldout.json"),
            "written after the first rules were frozen; its misses then shaped rules",
        ),
        (
            load("attacks-heldout-2.json"),
            "by an author who never saw the rules; its misses then shaped rules",
        ),
        (
            load("attacks-heldout-3.json"),
            "by another author who never saw the rules, after they were frozen",
        ),
    ];
    let benign_sets = [
        (load("benign.json"), "not tuned on"),
        (
            load("benign-2.json"),
            "by an author who never saw the rules; its false blocks then shaped rules",
        ),
        (
            load("benign-3.json"),
            "by another author who never saw the rules, after they were frozen",
        ),
    ];
    for ((name, cases), provenance) in &attack_sets {
        attack_report(&format!("{name} ({provenance})"), cases);
    }
    for ((name, cases), provenance) in &benign_sets {
        benign_report(&format!("{name} ({provenance})"), cases);
    }
    let attacks: Vec<&(String, Vec<Case>)> = attack_sets.iter().map(|(set, _)| set).collect();
    let benign: Vec<&(String, Vec<Case>)> = benign_sets.iter().map(|(set, _)| set).collect();
    baseline_report(&catalog, &attacks, &benign);
    if let Some(path) = std::env::var_os("EVAL_DUMP") {
        let sets: Vec<&Vec<Case>> = attacks
            .iter()
            .chain(&benign)
            .map(|(_, cases)| cases)
            .collect();
        dump(Path::new(&path), &catalog, &sets);
    }

    if !catalog.is_empty() {
        cost_report(&catalog);
        false_change_report(&catalog);
    }
}

// ---------------------------------------------------------------------------------------------
// Loading

fn load_catalogs(shared: &Path) -> Vec<CatalogTool> {
    let mut tools = Vec::new();
    let toucan = shared.join("toucan-mcp-servers/servers_with_tools.jsonl");
    for line in read_lines(&toucan) {
        let server = line["server_name"].as_str().unwrap_or("?").to_owned();
        for tool in line["tools"].as_array().into_iter().flatten() {
            tools.push(CatalogTool {
                catalog: "toucan",
                server: server.clone(),
                tool: tool.clone(),
            });
        }
    }
    let docker = shared.join("docker-mcp-registry/servers_tools.jsonl");
    for line in read_lines(&docker) {
        let server = line["server"].as_str().unwrap_or("?").to_owned();
        for tool in line["tools"].as_array().into_iter().flatten() {
            tools.push(CatalogTool {
                catalog: "docker",
                server: server.clone(),
                tool: docker_to_mcp(tool),
            });
        }
    }
    if let Some(Value::Array(servers)) = read_json(&shared.join("livemcpbench/tools.json")) {
        for entry in servers {
            for (server, listing) in entry["tools"].as_object().into_iter().flatten() {
                for tool in listing["tools"].as_array().into_iter().flatten() {
                    tools.push(CatalogTool {
                        catalog: "livemcpbench",
                        server: server.clone(),
                        tool: tool.clone(),
                    });
                }
            }
        }
    }
    let reference = shared.join("reference-mcp-servers");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&reference)
        .map(|dir| dir.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default();
    files.sort();
    for file in files
        .iter()
        .filter(|f| f.to_string_lossy().ends_with(".tools_list.json"))
    {
        let server = file
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".tools_list.json", "");
        if let Some(listing) = read_json(file) {
            for tool in listing["tools"].as_array().into_iter().flatten() {
                tools.push(CatalogTool {
                    catalog: "reference",
                    server: server.clone(),
                    tool: tool.clone(),
                });
            }
        }
    }
    tools
}

/// Docker's own format (`arguments: [{name, type, desc}]`) as an MCP `inputSchema`, so argument
/// descriptions are scanned like everyone else's.
fn docker_to_mcp(tool: &Value) -> Value {
    let Some(arguments) = tool.get("arguments").and_then(Value::as_array) else {
        return tool.clone();
    };
    let mut properties = serde_json::Map::new();
    for argument in arguments {
        let name = argument["name"].as_str().unwrap_or("arg").to_owned();
        let mut property =
            json!({"type": argument.get("type").cloned().unwrap_or(json!("string"))});
        if let Some(desc) = argument.get("desc") {
            property["description"] = desc.clone();
        }
        properties.insert(name, property);
    }
    let mut converted = tool.clone();
    let object = converted.as_object_mut().expect("tools are objects");
    object.remove("arguments");
    object.insert(
        "inputSchema".into(),
        json!({"type": "object", "properties": properties}),
    );
    converted
}

fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .map(|text| {
            text.lines()
                .filter_map(|line| serde_json::from_str(line).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

fn load_cases(path: &Path) -> Vec<Case> {
    let Some(Value::Array(items)) = read_json(path) else {
        println!("(missing or invalid: {})", path.display());
        return Vec::new();
    };
    items
        .iter()
        .map(|item| Case {
            id: item["id"].as_str().unwrap_or("?").to_owned(),
            class: item["class"].as_str().unwrap_or("?").to_owned(),
            lang: item["lang"].as_str().unwrap_or("?").to_owned(),
            tool: item.get("tool").cloned(),
            instructions: item
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
            other_servers_tools: item["other_servers_tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|pair| {
                    Some((pair[0].as_str()?.to_owned(), pair[1].as_str()?.to_owned()))
                })
                .collect(),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Scanning

fn scan_case(case: &Case) -> Vec<toolreg_trust::Finding> {
    let ctx = ScanContext::new("case-server", case.other_servers_tools.clone());
    let mut findings = Vec::new();
    if let Some(tool) = &case.tool {
        findings.extend(scan_tool(tool, &ctx));
    }
    if let Some(instructions) = &case.instructions {
        findings.extend(scan_instructions(instructions, &ctx));
    }
    findings
}

/// A context per catalog holding every (server, tool) of it; scans set `server` before use.
fn catalog_contexts(catalog: &[CatalogTool]) -> HashMap<&'static str, ScanContext> {
    let mut pairs: HashMap<&'static str, Vec<(String, String)>> = HashMap::new();
    for entry in catalog {
        let name = entry.tool["name"].as_str().unwrap_or("").to_owned();
        pairs
            .entry(entry.catalog)
            .or_default()
            .push((entry.server.clone(), name));
    }
    pairs
        .into_iter()
        .map(|(k, v)| (k, ScanContext::new("", v)))
        .collect()
}

fn scan_catalog(
    catalog: &[CatalogTool],
    contexts: &mut HashMap<&'static str, ScanContext>,
) -> Vec<Vec<toolreg_trust::Finding>> {
    catalog
        .iter()
        .map(|entry| {
            let ctx = contexts
                .get_mut(entry.catalog)
                .expect("context per catalog");
            if ctx.server != entry.server {
                ctx.server.clone_from(&entry.server);
            }
            scan_tool(&entry.tool, ctx)
        })
        .collect()
}

fn catalog_report(catalog: &[CatalogTool]) {
    let mut contexts = catalog_contexts(catalog);
    let results = scan_catalog(catalog, &mut contexts);
    let mut per_catalog: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    let mut warned_rules: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut blocked, mut warned) = (0, 0);
    for (entry, findings) in catalog.iter().zip(&results) {
        let counts = per_catalog.entry(entry.catalog).or_default();
        counts.0 += 1;
        match worst_level(findings) {
            Some(Level::Block) => {
                blocked += 1;
                counts.1 += 1;
            }
            Some(Level::Warn) => {
                warned += 1;
                counts.2 += 1;
                for finding in findings {
                    *warned_rules.entry(finding.rule).or_default() += 1;
                }
            }
            None => {}
        }
    }
    let total = catalog.len();
    println!("== Real catalogs: {total} tools");
    for (name, (count, b, w)) in &per_catalog {
        println!("   {name:<13} {count:>6} tools, {b} blocked, {w} warned");
    }
    println!(
        "   blocked: {blocked} ({:.3} %, goal ≤ 0.1 %)   warned: {warned} ({:.2} %, goal ≤ 2 %)",
        percent(blocked, total),
        percent(warned, total)
    );
    println!("   warned tools' findings by rule: {warned_rules:?}");
    println!("-- Every blocked tool:");
    for (entry, findings) in catalog.iter().zip(&results) {
        if worst_level(findings) != Some(Level::Block) {
            continue;
        }
        println!(
            "   [{}] {}/{}",
            entry.catalog,
            entry.server,
            entry.tool["name"].as_str().unwrap_or("?")
        );
        for finding in findings.iter().filter(|f| f.level == Level::Block) {
            println!(
                "      {} @ {}: {}",
                finding.rule, finding.field, finding.excerpt
            );
        }
    }
    let show_warned: usize = std::env::var("EVAL_SHOW_WARNED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    if show_warned > 0 {
        println!("-- First {show_warned} warned tools:");
        let warned_entries = catalog
            .iter()
            .zip(&results)
            .filter(|(_, findings)| worst_level(findings) == Some(Level::Warn))
            .take(show_warned);
        for (entry, findings) in warned_entries {
            println!(
                "   [{}] {}/{}",
                entry.catalog,
                entry.server,
                entry.tool["name"].as_str().unwrap_or("?")
            );
            for finding in findings {
                println!(
                    "      {} @ {}: {}",
                    finding.rule, finding.field, finding.excerpt
                );
            }
        }
    }
    println!();
}

fn attack_report(title: &str, cases: &[Case]) {
    if cases.is_empty() {
        return;
    }
    println!("== Attacks: {title}: {} cases", cases.len());
    let mut per_class: BTreeMap<String, [usize; 3]> = BTreeMap::new();
    let mut per_lang: BTreeMap<String, [usize; 3]> = BTreeMap::new();
    let mut missed = Vec::new();
    for case in cases {
        let level = worst_level(&scan_case(case));
        for key in [
            per_class.entry(case.class.clone()).or_default(),
            per_lang.entry(case.lang.clone()).or_default(),
        ] {
            key[0] += 1;
            key[1] += usize::from(level.is_some());
            key[2] += usize::from(level == Some(Level::Block));
        }
        if level.is_none() {
            missed.push(case.id.clone());
        }
    }
    let flagged: usize = per_class.values().map(|c| c[1]).sum();
    let blocked: usize = per_class.values().map(|c| c[2]).sum();
    println!(
        "   flagged {flagged}/{} ({:.1} %, goal ≥ 90 %), blocked {blocked} ({:.1} %)",
        cases.len(),
        percent(flagged, cases.len()),
        percent(blocked, cases.len())
    );
    for (name, [count, flagged, blocked]) in per_class.iter().chain(per_lang.iter()) {
        println!("   {name:<24} {flagged:>3}/{count:<3} flagged, {blocked:>3} blocked");
    }
    println!("   missed: {missed:?}\n");
}

fn benign_report(title: &str, cases: &[Case]) {
    if cases.is_empty() {
        return;
    }
    println!("== Hard benign cases: {title}: {}", cases.len());
    let (mut blocked, mut warned) = (0, 0);
    for case in cases {
        let findings = scan_case(case);
        if let Some(level) = worst_level(&findings) {
            if level == Level::Block {
                blocked += 1;
            } else {
                warned += 1;
            }
            let rules: Vec<&str> = findings.iter().map(|f| f.rule).collect();
            println!("   {:?} {} ({}): {rules:?}", level, case.id, case.lang);
        }
    }
    println!(
        "   blocked {blocked} (goal 0), warned {warned}, clean {}\n",
        cases.len() - blocked - warned
    );
}

fn baseline_flags(tool: Option<&Value>, instructions: Option<&str>) -> bool {
    let mut text = tool.map(|tool| tool.to_string()).unwrap_or_default();
    text.push_str(instructions.unwrap_or(""));
    let text = text.to_lowercase();
    BASELINE_WORDS.iter().any(|word| text.contains(word))
}

fn baseline_report(
    catalog: &[CatalogTool],
    attacks: &[&(String, Vec<Case>)],
    benign: &[&(String, Vec<Case>)],
) {
    println!("== Baseline (keyword list {BASELINE_WORDS:?}) vs scanner (block or warn)");
    let rate = |cases: &[Case], scanner: bool| {
        let hits = cases
            .iter()
            .filter(|case| {
                if scanner {
                    worst_level(&scan_case(case)).is_some()
                } else {
                    baseline_flags(case.tool.as_ref(), case.instructions.as_deref())
                }
            })
            .count();
        format!(
            "{hits}/{} ({:.1} %)",
            cases.len(),
            percent(hits, cases.len())
        )
    };
    for (what, sets) in [("detected", attacks), ("flagged (FP)", benign)] {
        for (name, cases) in sets.iter().map(|set| (&set.0, &set.1)) {
            println!(
                "   {name:<24} {what:<13} baseline {:<18} scanner {}",
                rate(cases, false),
                rate(cases, true)
            );
        }
    }
    if !catalog.is_empty() {
        let flagged = catalog
            .iter()
            .filter(|entry| baseline_flags(Some(&entry.tool), None))
            .count();
        println!(
            "   real catalog flagged  baseline {flagged}/{} ({:.2} %)   (scanner: see blocked + warned above)",
            catalog.len(),
            percent(flagged, catalog.len())
        );
    }
    println!();
}

/// One line per tool or case: its digest, the SHA-256 of its whole canonical text (unpinned
/// fields too), then every finding in full.
fn dump(path: &Path, catalog: &[CatalogTool], case_sets: &[&Vec<Case>]) {
    use std::fmt::Write;
    let mut out = String::new();
    let write_findings = |out: &mut String, findings: &[toolreg_trust::Finding]| {
        for f in findings {
            let _ = writeln!(
                out,
                "   {:?} {} @ {}\n      {:?}\n      {:?}",
                f.level, f.rule, f.field, f.excerpt, f.explanation
            );
        }
    };
    let whole = |tool: &Value| instructions_digest(&canonical_json(tool));
    let mut contexts = catalog_contexts(catalog);
    let results = scan_catalog(catalog, &mut contexts);
    for (entry, findings) in catalog.iter().zip(&results) {
        let _ = writeln!(
            out,
            "[{}] {}/{} {} {}",
            entry.catalog,
            entry.server,
            entry.tool["name"],
            digest(&entry.tool),
            whole(&entry.tool)
        );
        write_findings(&mut out, findings);
    }
    for case in case_sets.iter().flat_map(|cases| cases.iter()) {
        let _ = writeln!(out, "case {}", case.id);
        if let Some(tool) = &case.tool {
            let _ = writeln!(out, "   tool {} {}", digest(tool), whole(tool));
        }
        if let Some(instructions) = &case.instructions {
            let _ = writeln!(out, "   instructions {}", instructions_digest(instructions));
        }
        write_findings(&mut out, &scan_case(case));
    }
    // Number spelling beyond the catalogs: random bit patterns, integers and short decimals.
    let mut rng = 0x2545_F491_4F6C_DD1D_u64;
    let mut numbers = Vec::new();
    for i in 0..100_000_u64 {
        let bits = next(&mut rng);
        numbers.push(json!(f64::from_bits(bits)));
        numbers.push(json!((bits >> (i % 64)) as i64 - (1 << 40)));
        numbers.push(json!((bits % 100_000) as f64 / 10f64.powi((i % 12) as i32)));
    }
    let _ = writeln!(out, "numbers {}", whole(&Value::Array(numbers)));
    std::fs::write(path, out).expect("EVAL_DUMP is writable");
    println!("== Dumped digests and findings to {}\n", path.display());
}

// ---------------------------------------------------------------------------------------------
// Cost and stability

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn cost_report(catalog: &[CatalogTool]) {
    let mut contexts = catalog_contexts(catalog);
    // Warm up the lazily compiled rule tables and the name indexes.
    let _ = scan_catalog(catalog, &mut contexts);
    let runs = 7;
    let mut full = Vec::new();
    let mut canonical_only = Vec::new();
    let mut serde_reference = Vec::new();
    let mut digest_only = Vec::new();
    let mut total_bytes = 0;
    for _ in 0..runs {
        let start = Instant::now();
        total_bytes = catalog
            .iter()
            .map(|entry| serde_json::to_string(&entry.tool).unwrap().len())
            .sum();
        serde_reference.push(start.elapsed());

        let start = Instant::now();
        let mut bytes = 0;
        for entry in catalog {
            bytes += canonical_json(&entry.tool).len();
        }
        canonical_only.push(start.elapsed());
        std::hint::black_box(bytes);

        let start = Instant::now();
        let mut count = 0;
        for entry in catalog {
            count += digest(&entry.tool).len();
        }
        let digested = start.elapsed();
        let findings = scan_catalog(catalog, &mut contexts);
        full.push(start.elapsed());
        digest_only.push(digested);
        std::hint::black_box((count, findings.len()));
    }
    println!(
        "== Cost (release build, median of {runs} runs, {} tools)",
        catalog.len()
    );
    println!(
        "   reference: serde_json::to_string of the same tools ({:.1} MB): {:?}",
        total_bytes as f64 / 1e6,
        median(serde_reference)
    );
    println!(
        "   canonical text only:              {:?}",
        median(canonical_only)
    );
    println!(
        "   canonicalise + digest:            {:?}",
        median(digest_only)
    );
    println!(
        "   canonicalise + digest + scan all: {:?} (goal ≤ 100 ms)",
        median(full)
    );

    let tools: Vec<Value> = catalog
        .iter()
        .filter(|entry| entry.catalog == "toucan")
        .map(|entry| entry.tool.clone())
        .collect::<Vec<_>>();
    // Toucan names repeat across servers; take 1,000 distinct names for one pinned "server".
    let mut seen = std::collections::HashSet::new();
    let listing: Vec<Value> = tools
        .into_iter()
        .filter(|tool| seen.insert(tool["name"].as_str().unwrap_or("").to_owned()))
        .take(1000)
        .collect();
    let pins = PinnedServer::pin(&listing, Some("Server instructions.")).expect("distinct names");
    let listing_bytes: usize = listing.iter().map(|tool| tool.to_string().len()).sum();
    // The re-list arrives as text, so it is a fresh parse with its own allocation.
    let relisted: Vec<Value> =
        serde_json::from_str(&serde_json::to_string(&listing).unwrap()).unwrap();
    let mut samples = Vec::new();
    for _ in 0..31 {
        let start = Instant::now();
        let comparison = compare(&pins, &relisted, Some("Server instructions.")).unwrap();
        samples.push(start.elapsed());
        assert!(comparison.changes.is_empty());
        assert_eq!(comparison.unchanged.len(), listing.len());
    }
    println!(
        "   compare a re-list of {} unchanged tools ({:.1} MB) with their pins: {:?} (goal ≤ 5 ms, median of 31)\n",
        listing.len(),
        listing_bytes as f64 / 1e6,
        median(samples)
    );
}

/// Re-serialises every real tool with shuffled keys, other whitespace and integers written as
/// floats, and checks the digest does not move.
fn false_change_report(catalog: &[CatalogTool]) {
    let mut rng = 0x9E37_79B9_7F4A_7C15_u64;
    let mut false_changes = Vec::new();
    let mut integers_rewritten = 0;
    for entry in catalog {
        let mut text = String::new();
        write_shuffled(&entry.tool, &mut text, &mut rng, &mut integers_rewritten);
        let reparsed: Value = serde_json::from_str(&text).expect("re-serialised JSON parses");
        if digest(&reparsed) != digest(&entry.tool) {
            false_changes.push(format!("{}/{}", entry.server, entry.tool["name"]));
        }
    }
    println!("== Zero false changes");
    println!(
        "   {} tools re-serialised (shuffled keys, random whitespace, {integers_rewritten} integers written as floats): {} false changes {:?}",
        catalog.len(),
        false_changes.len(),
        false_changes.iter().take(5).collect::<Vec<_>>()
    );
}

fn next(rng: &mut u64) -> u64 {
    // xorshift64*: reproducible, no dependency.
    *rng ^= *rng >> 12;
    *rng ^= *rng << 25;
    *rng ^= *rng >> 27;
    rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

fn space(rng: &mut u64, out: &mut String) {
    const SPACES: [&str; 5] = ["", " ", "\n", "\t  ", "\r\n    "];
    out.push_str(SPACES[(next(rng) % 5) as usize]);
}

fn write_shuffled(value: &Value, out: &mut String, rng: &mut u64, rewritten: &mut usize) {
    space(rng, out);
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            for i in (1..entries.len()).rev() {
                entries.swap(i, (next(rng) % (i as u64 + 1)) as usize);
            }
            out.push('{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                space(rng, out);
                out.push_str(&serde_json::to_string(key).unwrap());
                space(rng, out);
                out.push(':');
                write_shuffled(item, out, rng, rewritten);
            }
            space(rng, out);
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_shuffled(item, out, rng, rewritten);
            }
            space(rng, out);
            out.push(']');
        }
        Value::Number(number) if number.is_i64() || number.is_u64() => {
            *rewritten += 1;
            // `1` → `1.0` or `1e0`.
            if next(rng) % 2 == 0 {
                out.push_str(&format!("{number}.0"));
            } else {
                out.push_str(&format!("{number}e0"));
            }
        }
        other => out.push_str(&other.to_string()),
    }
    space(rng, out);
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}
