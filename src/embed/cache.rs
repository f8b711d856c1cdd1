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
//!
//! Every upgrade of the model or of the encoder's arithmetic starts a new file (a new
//! identity), and nothing would ever read the old one again unless that version runs. So the
//! first read of a cache deletes the other cache files in its folder that nobody has used for
//! [`STALE_AFTER`]: a file in use has its modification time refreshed on that first read (at
//! most daily), so two toolreg versions sharing the folder do not delete each other's.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

const MAGIC: &[u8; 16] = b"toolreg vectors\n";
const VERSION: u32 = 1;
const HEADER_LEN: usize = 64;
const RECORD_MAGIC: &[u8; 4] = b"TRv1";
const KEY_LEN: usize = 32;
const CHECK_LEN: usize = 8;

/// Another identity's cache file unused for this long is deleted (a month: an app that has not
/// started for that long re-embeds its catalog once, seconds of work).
pub const STALE_AFTER: Duration = Duration::from_secs(30 * 24 * 60 * 60);
/// A cache file in use has its modification time refreshed when it is older than this.
const TOUCH_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

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
    /// Stale cache files of other model identities deleted from the folder.
    pub pruned: usize,
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
        self.stats.pruned = prune_stale(&self.path, SystemTime::now());
        self.read_file();
    }

    fn read_file(&mut self) {
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
        touch(&self.path, SystemTime::now());
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

/// Marks the cache file as in use for [`prune_stale`] in other versions' processes. Best
/// effort: a read-only cache folder still serves its vectors.
fn touch(path: &Path, now: SystemTime) {
    let Ok(modified) = std::fs::metadata(path).and_then(|m| m.modified()) else {
        return;
    };
    if now.duration_since(modified).unwrap_or_default() > TOUCH_AFTER
        && let Ok(file) = OpenOptions::new().append(true).open(path)
    {
        let _ = file.set_modified(now);
    }
}

/// Deletes the cache files beside `own` that belong to other identities and were last
/// modified more than [`STALE_AFTER`] before `now`: whole cache files (named like ours and
/// starting with our magic, so a user's own file of a similar name is never touched) and the
/// temporary files of writers that died before moving them into place. Returns how many went;
/// failures are ignored (another process may have deleted the file first).
fn prune_stale(own: &Path, now: SystemTime) -> usize {
    let (Some(dir), Some(own_name)) = (own.parent(), own.file_name()) else {
        return 0;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut pruned = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name == own_name {
            continue;
        }
        let Some(kind) = name.to_str().and_then(cache_file_kind) else {
            continue;
        };
        let path = entry.path();
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|modified| now.duration_since(modified).unwrap_or_default() > STALE_AFTER);
        if !stale || (kind == CacheFileKind::Vectors && !starts_with_magic(&path)) {
            continue;
        }
        if std::fs::remove_file(&path).is_ok() {
            pruned += 1;
        }
    }
    pruned
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum CacheFileKind {
    /// `vectors-<16 hex>-<dim>.bin`
    Vectors,
    /// `vectors-<16 hex>-<dim>.tmp-<pid>-<n>`, left by a writer that died mid-rewrite.
    Temporary,
}

/// Which of this module's files `name` is, if any.
fn cache_file_kind(name: &str) -> Option<CacheFileKind> {
    let rest = name.strip_prefix("vectors-")?;
    let (hex, rest) = rest.split_at_checked(16)?;
    let rest = rest.strip_prefix('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    if let Some(dim) = rest.strip_suffix(".bin") {
        return digits(dim).then_some(CacheFileKind::Vectors);
    }
    let (dim, tmp) = rest.split_once(".tmp-")?;
    let (pid, n) = tmp.split_once('-')?;
    (digits(dim) && digits(pid) && digits(n)).then_some(CacheFileKind::Temporary)
}

fn starts_with_magic(path: &Path) -> bool {
    let mut head = [0u8; MAGIC.len()];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == MAGIC)
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

    fn set_modified(path: &Path, when: SystemTime) {
        let file = OpenOptions::new().append(true).open(path).unwrap();
        file.set_modified(when).unwrap();
    }

    fn modified(path: &Path) -> SystemTime {
        std::fs::metadata(path).unwrap().modified().unwrap()
    }

    #[test]
    fn other_identities_files_unused_for_a_month_are_deleted_and_ours_is_kept_fresh() {
        let dir = temp_dir("prune");
        let month_ago = SystemTime::now() - STALE_AFTER - Duration::from_secs(3600);
        let week_ago = SystemTime::now() - Duration::from_secs(7 * 24 * 60 * 60);
        let cache_with_one_vector = |identity: u8| {
            let mut c = VectorCache::new(&dir, [identity; 32], 4);
            let key = c.key("read a file");
            c.insert(vec![(key, vector(1.0))]);
            (c.path().to_owned(), key)
        };
        // An older toolreg's file, unused for a month; another version's, used a week ago;
        // ours, last written a month ago.
        let (upgraded_away, _) = cache_with_one_vector(5);
        let (still_used_elsewhere, _) = cache_with_one_vector(6);
        let (ours, key) = cache_with_one_vector(9);
        // A writer that died before moving its file into place; a user's file that looks
        // like ours by name but is not one; an unrelated file.
        let leftover = dir.join("vectors-0123456789abcdef-4.tmp-77-0");
        let lookalike = dir.join("vectors-0123456789abcdef-4.bin");
        let unrelated = dir.join("vectors.txt");
        for path in [&leftover, &lookalike, &unrelated] {
            std::fs::write(path, b"not a cache file").unwrap();
        }
        for path in [&upgraded_away, &ours, &leftover, &lookalike, &unrelated] {
            set_modified(path, month_ago);
        }
        set_modified(&still_used_elsewhere, week_ago);

        let mut next_start = VectorCache::new(&dir, [9; 32], 4);
        assert_eq!(next_start.get(&key), Some(&vector(1.0)[..]));
        assert_eq!(next_start.stats().pruned, 2);
        assert!(!upgraded_away.exists() && !leftover.exists());
        assert!(still_used_elsewhere.exists() && lookalike.exists() && unrelated.exists());
        // Ours was read, so it now counts as in use for the other versions' pruning.
        assert!(modified(&ours) > week_ago);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn only_this_modules_file_names_are_candidates_for_pruning() {
        use CacheFileKind::*;
        for (name, kind) in [
            ("vectors-0123456789abcdef-384.bin", Some(Vectors)),
            ("vectors-0123456789abcdef-384.tmp-4242-3", Some(Temporary)),
            ("vectors-0123456789ABCDEF-384.bin", None),
            ("vectors-0123456789abcde-384.bin", None),
            ("vectors-0123456789abcdef-.bin", None),
            ("vectors-0123456789abcdef-384.bin.bak", None),
            ("vectors-0123456789abcdef-384.tmp-42", None),
            ("vectors-0123456789abcdef-384.tmp-x-1", None),
            ("my-vectors-0123456789abcdef-384.bin", None),
            ("vectors-é123456789abcdef-384.bin", None),
        ] {
            assert_eq!(cache_file_kind(name), kind, "{name}");
        }
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
