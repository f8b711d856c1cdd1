fn main() {
    napi_build::setup();
    // The tokenizer's disk cache (src/tokens/cache.rs) holds tables serialized by these crates;
    // a file written by other versions of them must never be read, so their versions name it.
    println!("cargo:rerun-if-changed=Cargo.lock");
    let lock = std::fs::read_to_string("Cargo.lock").unwrap_or_default();
    let layout: Vec<String> = ["bpe", "aneubeck-daachorse", "postcard"]
        .iter()
        .map(|name| format!("{name}-{}", locked_version(&lock, name)))
        .collect();
    println!(
        "cargo:rustc-env=TOOLREG_TOKENIZER_LAYOUT={}",
        layout.join("+")
    );
}

/// The version Cargo.lock pins `name` at, or "unknown" (then the cache file name says so, and
/// a build with a lock file never reads it).
fn locked_version<'a>(lock: &'a str, name: &str) -> &'a str {
    let entry = format!("name = \"{name}\"\nversion = \"");
    lock.find(&entry)
        .and_then(|at| lock[at + entry.len()..].split('"').next())
        .unwrap_or("unknown")
}
