//! Latency of the local neural embedder (src/embed/bert.rs), single-threaded, release build:
//!
//!     cargo run --release --example bert_latency -- [MODEL_DIR]
//!
//! MODEL_DIR defaults to the built optional package (npm run model:build). Prints the median
//! and p90 time to embed a query (~12 tokens) and a tool text (~50 tokens) one at a time, a
//! batch of tool texts per text, and the load time.

use std::path::PathBuf;
use std::time::Instant;

use toolreg::embed::bert::BertEncoder;

const QUERY: &str = "find the weather forecast for tomorrow in paris";
const TOOL: &str = "get_forecast: Get the weather forecast for a location. Returns the daily \
                    high and low temperature, precipitation probability and wind speed for the \
                    next seven days; coordinates are latitude and longitude in degrees";

fn percentiles(mut times: Vec<f64>) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.9))
}

fn time_each(model: &BertEncoder, text: &str, runs: usize) -> (f64, f64) {
    let times = (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(model.embed_batch(&[text]));
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    percentiles(times)
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("npm-optional/model-minilm-l6-v2/model")
        });
    let t = Instant::now();
    let model = BertEncoder::from_dir(&dir).unwrap_or_else(|e| panic!("{e}"));
    let load = t.elapsed().as_secs_f64() * 1e3;
    let info = model.info();
    println!(
        "model {}: {} dims, {} layers, weights {} ({:.1} MB), loaded in {load:.0} ms",
        dir.display(),
        info.dimensions,
        info.layers,
        info.weights_dtype,
        info.weights_bytes as f64 / 1e6
    );
    for (what, text) in [("query", QUERY), ("tool text", TOOL)] {
        let tokens = model.token_ids(text).len();
        time_each(&model, text, 20);
        let (p50, p90) = time_each(&model, text, 200);
        println!("{what} ({tokens} tokens), one at a time: p50 {p50:.2} ms, p90 {p90:.2} ms");
    }
    let batch: Vec<&str> = (0..64).map(|_| TOOL).collect();
    let t = Instant::now();
    for _ in 0..5 {
        std::hint::black_box(model.embed_batch(&batch));
    }
    let per = t.elapsed().as_secs_f64() * 1e3 / (5.0 * batch.len() as f64);
    println!("tool text in batches of 64, one thread: {per:.2} ms per text");
    let t = Instant::now();
    for _ in 0..5 {
        std::hint::black_box(model.embed_parallel(&batch));
    }
    let per = t.elapsed().as_secs_f64() * 1e3 / (5.0 * batch.len() as f64);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("tool text in batches of 64, all {cores} cores: {per:.2} ms per text");
}
