//! The local model's disk cache of tool vectors, keyed by text hash.
//!
//! Embedding a catalog with the local model takes seconds (tens of milliseconds per tool on
//! one core); its vectors only change when the tool's text or the model does. So each vector
//! is kept in one append-only file per model, under `SHA-256(model identity ‖ text)`, and a
//! later process (the next app start) reads them back instead of running the model.
//!
//! Layout: a 64-byte header (magic, version, dimensions, model identity), then records of
//! `"TRv1" ‖ key (32) ‖ vector (dim × f32 LE) ‖ check (first 8 bytes of SHA-256(key ‖ vector))`.
//! Readers scan record by record and resynchronise on the magic after damage, so a truncated
//! tail (a writer killed mid-append, or one appending right now) and stray bytes cost only the
//! records they touch. Appends are single `write` calls on a file opened for appending, so
//! processes sharing the cache add records without coordinating; a key written twice is the
//! same vector. Failing to read or write is never fatal: the caller computes the vector instead
//! and reports the first failure as a warning.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

const MAGIC: &[u8; 16] = b"toolreg vectors\n";
const VERSION: u32 = 1;
const HEADER_LEN: usize = 64;
const RECORD_MAGIC: &[u8; 4] = b"TRv1";
const KEY_LEN: usize = 32;
const CHECK_LEN: usize = 8;

pub type Key = [u8; KEY_LEN];

/// What the cache did, for the host's stats.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Vectors read from the file when it was loaded.
    pub loaded: usize,
    /// Bytes of the file that were not whole, valid records (damage, a torn tail).
    pub skipped_bytes: usize,
    /// Vectors appended by this process.
    pub written: usize,
    /// Reads or writes that failed (each reported once as a warning at most).
    pub errors: usize,
}

pub struct VectorCache {
    path: PathBuf,
    identity: [u8; 32],
    dim: usize,
    vectors: HashMap<Key, Box<[f32]>>,
    loaded: bool,
    /// The file must be (re)written from its header: absent, empty or someone else's.
    rewrite: bool,
    stats: CacheStats,
    warnings: Vec<String>,
    warned: bool,
}

impl VectorCache {
    /// The cache of the model `identity` (vectors of `dim` values) in `dir`; nothing is read
    /// until the first lookup.
    pub fn new(dir: &Path, identity: [u8; 32], dim: usize) -> Self {
        let hex: String = identity[..8].iter().map(|b| format!("{b:02x}")).collect();
        VectorCache {
            path: dir.join(format!("vectors-{hex}-{dim}.bin")),
            identity,
            dim,
            vectors: HashMap::new(),
            loaded: false,
            rewrite: false,
            stats: CacheStats::default(),
            warnings: Vec::new(),
            warned: false,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn stats(&self) -> &CacheStats {
        &self.stats
    }

    /// The key of `text`'s vector under this model.
    pub fn key(&self, text: &str) -> Key {
        let mut h = Sha256::new();
        h.update(self.identity);
        h.update(text.as_bytes());
        h.finalize().into()
    }

    /// The cached vector of `key`, reading the file on first use.
    pub fn get(&mut self, key: &Key) -> Option<&[f32]> {
        self.load();
        self.vectors.get(key).map(|v| &v[..])
    }

    /// Keeps `entries` and appends them to the file.
    pub fn insert(&mut self, entries: Vec<(Key, Vec<f32>)>) {
        self.load();
        let entries: Vec<_> = entries
            .into_iter()
            .filter(|(_, v)| v.len() == self.dim)
            .collect();
        if entries.is_empty() {
            return;
        }
        let mut bytes = Vec::with_capacity(entries.len() * self.record_len() + HEADER_LEN);
        for (key, vector) in &entries {
            self.encode_record(key, vector, &mut bytes);
        }
        match self.append(bytes) {
            Ok(()) => self.stats.written += entries.len(),
            Err(e) => self.fail(format!("could not write {}: {e}", self.path.display())),
        }
        for (key, vector) in entries {
            self.vectors.insert(key, vector.into_boxed_slice());
        }
    }

    /// Warnings since the last call (the first read or write failure).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    fn record_len(&self) -> usize {
        RECORD_MAGIC.len() + KEY_LEN + self.dim * 4 + CHECK_LEN
    }

    fn header(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[..16].copy_from_slice(MAGIC);
        h[16..20].copy_from_slice(&VERSION.to_le_bytes());
        h[20..24].copy_from_slice(&(self.dim as u32).to_le_bytes());
        h[32..64].copy_from_slice(&self.identity);
        h
    }

    fn encode_record(&self, key: &Key, vector: &[f32], out: &mut Vec<u8>) {
        out.extend_from_slice(RECORD_MAGIC);
        let start = out.len();
        out.extend_from_slice(key);
        for v in vector {
            out.extend_from_slice(&v.to_le_bytes());
        }
        let check = Sha256::digest(&out[start..]);
        out.extend_from_slice(&check[..CHECK_LEN]);
    }

    fn fail(&mut self, message: String) {
        self.stats.errors += 1;
        if !self.warned {
            self.warned = true;
            self.warnings.push(format!(
                "{message}; the local model's vectors are computed instead of cached"
            ));
        }
    }

    fn load(&mut self) {
        if self.loaded {
            return;
        }
        self.loaded = true;
        let mut bytes = Vec::new();
        match File::open(&self.path).and_then(|mut f| f.read_to_end(&mut bytes)) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {
                self.rewrite = true;
                return;
            }
            Err(e) => {
                self.fail(format!("could not read {}: {e}", self.path.display()));
                return;
            }
        }
        if bytes.len() < HEADER_LEN {
            // Empty, or a header being written by another process right now.
            self.rewrite = true;
            return;
        }
        if bytes[..HEADER_LEN] != self.header() {
            // Not this model's file (another format version, a damaged header): replaced on
            // the first write rather than appended to.
            self.rewrite = true;
            self.stats.skipped_bytes = bytes.len();
            return;
        }
        let record = self.record_len();
        let mut p = HEADER_LEN;
        while p + record <= bytes.len() {
            let r = &bytes[p..p + record];
            if &r[..4] == RECORD_MAGIC {
                let body = &r[4..record - CHECK_LEN];
                if Sha256::digest(body)[..CHECK_LEN] == r[record - CHECK_LEN..] {
                    let key: Key = body[..KEY_LEN].try_into().expect("key length");
                    let vector = body[KEY_LEN..]
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                        .collect();
                    self.vectors.insert(key, vector);
                    p += record;
                    continue;
                }
            }
            // Damage: look for the next record's magic one byte further on.
            p += 1;
            self.stats.skipped_bytes += 1;
        }
        self.stats.skipped_bytes += bytes.len() - p;
        self.stats.loaded = self.vectors.len();
    }

    fn append(&mut self, records: Vec<u8>) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if self.rewrite {
            // A fresh file with the header, moved into place whole: a reader never sees
            // another model's header with our records after it.
            static TMP: AtomicU64 = AtomicU64::new(0);
            let n = TMP.fetch_add(1, Ordering::Relaxed);
            let tmp = self
                .path
                .with_extension(format!("tmp-{}-{n}", std::process::id()));
            let mut content = self.header().to_vec();
            content.extend_from_slice(&records);
            let written =
                std::fs::write(&tmp, &content).and_then(|()| std::fs::rename(&tmp, &self.path));
            if written.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            written?;
            self.rewrite = false;
            return Ok(());
        }
        let mut file = OpenOptions::new().append(true).open(&self.path)?;
        // One write call: concurrent appenders do not interleave within it on local disks, and
        // the readers' resynchronisation covers the cases where they do.
        file.write_all(&records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("toolreg-cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn vector(seed: f32) -> Vec<f32> {
        (0..4).map(|i| seed + i as f32 * 0.25).collect()
    }

    #[test]
    fn vectors_written_by_one_cache_are_read_by_the_next() {
        let dir = temp_dir("roundtrip");
        let mut a = VectorCache::new(&dir.join("nested"), [7; 32], 4);
        let (k1, k2) = (a.key("read a file"), a.key("send an email"));
        assert_ne!(k1, k2);
        assert!(a.get(&k1).is_none());
        a.insert(vec![(k1, vector(1.0))]);
        a.insert(vec![(k2, vector(2.0))]);
        assert_eq!(a.stats().written, 2);
        assert!(a.take_warnings().is_empty());

        let mut b = VectorCache::new(&dir.join("nested"), [7; 32], 4);
        assert_eq!(b.get(&k1), Some(&vector(1.0)[..]));
        assert_eq!(b.get(&k2), Some(&vector(2.0)[..]));
        assert_eq!(b.stats().loaded, 2);
        assert_eq!(b.stats().skipped_bytes, 0);

        // Another model (identity) has its own file and keys.
        let mut other = VectorCache::new(&dir.join("nested"), [8; 32], 4);
        assert_ne!(other.key("read a file"), k1);
        assert_ne!(other.path(), b.path());
        assert!(other.get(&k1).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_truncated_tail_and_damage_cost_only_the_records_they_touch() {
        let dir = temp_dir("damage");
        let mut a = VectorCache::new(&dir, [1; 32], 4);
        let keys: Vec<Key> = (0..5).map(|i| a.key(&format!("tool {i}"))).collect();
        a.insert(
            keys.iter()
                .enumerate()
                .map(|(i, k)| (*k, vector(i as f32)))
                .collect(),
        );
        let path = a.path().to_owned();
        let mut bytes = std::fs::read(&path).unwrap();
        let record = a.record_len();
        // Flip a byte inside record 1, cut record 4 in half.
        bytes[HEADER_LEN + record + 10] ^= 0xff;
        bytes.truncate(HEADER_LEN + 4 * record + record / 2);
        std::fs::write(&path, &bytes).unwrap();

        let mut b = VectorCache::new(&dir, [1; 32], 4);
        let found: Vec<bool> = keys.iter().map(|k| b.get(k).is_some()).collect();
        assert_eq!(found, [true, false, true, true, false]);
        assert_eq!(b.get(&keys[2]), Some(&vector(2.0)[..]));
        assert_eq!(b.stats().skipped_bytes, record + record / 2);
        // Appending after a torn tail: the new record is found by resynchronising.
        b.insert(vec![(keys[4], vector(4.0))]);
        let mut c = VectorCache::new(&dir, [1; 32], 4);
        assert_eq!(c.get(&keys[4]), Some(&vector(4.0)[..]));
        assert!(c.get(&keys[1]).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_foreign_or_garbage_file_is_replaced_not_appended_to() {
        let dir = temp_dir("foreign");
        std::fs::create_dir_all(&dir).unwrap();
        let a = VectorCache::new(&dir, [2; 32], 4);
        std::fs::write(a.path(), vec![0xab; 500]).unwrap();
        let mut b = VectorCache::new(&dir, [2; 32], 4);
        let k = b.key("x");
        assert!(b.get(&k).is_none());
        assert_eq!(b.stats().skipped_bytes, 500);
        b.insert(vec![(k, vector(3.0))]);
        let mut c = VectorCache::new(&dir, [2; 32], 4);
        assert_eq!(c.get(&k), Some(&vector(3.0)[..]));
        assert_eq!(
            std::fs::metadata(c.path()).unwrap().len() as usize,
            HEADER_LEN + c.record_len()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unwritable_directory_is_one_warning_never_an_error() {
        let dir = temp_dir("unwritable");
        std::fs::create_dir_all(&dir).unwrap();
        // A file where the cache directory should be: creating the directory fails.
        let blocked = dir.join("blocked");
        std::fs::write(&blocked, b"").unwrap();
        let mut a = VectorCache::new(&blocked, [3; 32], 4);
        let k = a.key("x");
        a.insert(vec![(k, vector(1.0))]);
        a.insert(vec![(a.key("y"), vector(2.0))]);
        // Still served from memory for this process.
        assert_eq!(a.get(&k), Some(&vector(1.0)[..]));
        // The read at first use and both writes failed; one warning names the file.
        assert_eq!(a.stats().errors, 3);
        let warnings = a.take_warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("could not read"), "{}", warnings[0]);
        assert!(warnings[0].contains("blocked"), "{}", warnings[0]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn concurrent_appenders_and_readers_see_whole_records() {
        let dir = temp_dir("concurrent");
        let mut first = VectorCache::new(&dir, [4; 32], 4);
        first.insert(vec![(first.key("seed"), vector(0.0))]);
        std::thread::scope(|s| {
            for t in 0..4 {
                let dir = &dir;
                s.spawn(move || {
                    for i in 0..50 {
                        let mut c = VectorCache::new(dir, [4; 32], 4);
                        let k = c.key(&format!("{t}/{i}"));
                        // Every reader sees only whole, valid records.
                        let _ = c.get(&k);
                        assert_eq!(c.stats().errors, 0);
                        c.insert(vec![(k, vector(i as f32))]);
                    }
                });
            }
        });
        let mut all = VectorCache::new(&dir, [4; 32], 4);
        for t in 0..4 {
            for i in 0..50 {
                let k = all.key(&format!("{t}/{i}"));
                assert_eq!(all.get(&k), Some(&vector(i as f32)[..]), "{t}/{i}");
            }
        }
        assert_eq!(all.stats().skipped_bytes, 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
