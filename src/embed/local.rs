//! The local neural embedder: the BERT encoder with its disk cache of tool vectors.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::SystemTime;

use super::bert::{
    BertEncoder, CONFIG_FILE, LoadError, ModelFiles, ModelInfo, Role, SENTENCEPIECE_FILE,
    VOCAB_FILE, WEIGHTS_FILE,
};
use super::cache::{CacheStats, VectorCache};
use crate::search::{query_sentences, whole_query_vector};

/// A model folder as loaded: its canonical path and each model file's size and modification
/// time, `None` for a file the folder does not have (a rebuilt package is a new key).
type FolderKey = (PathBuf, Vec<Option<(u64, Option<SystemTime>)>>);

/// Encoders alive in this process: registries (and `loadLocalModel` calls) on the same model
/// folder share its weights (~45 MB) instead of loading them again. Each keeps its own cache
/// handle and counters.
static LOADED: Mutex<Vec<(FolderKey, Weak<BertEncoder>)>> = Mutex::new(Vec::new());

fn folder_key(dir: &Path) -> Option<FolderKey> {
    let dir = std::fs::canonicalize(dir).ok()?;
    // The tokenizer is one of vocab.txt (MiniLM) and sentencepiece.safetensors (e5).
    let files = [CONFIG_FILE, VOCAB_FILE, SENTENCEPIECE_FILE, WEIGHTS_FILE]
        .iter()
        .map(|f| {
            let meta = std::fs::metadata(dir.join(f)).ok();
            meta.map(|m| (m.len(), m.modified().ok()))
        })
        .collect();
    Some((dir, files))
}

/// The encoder of `dir` if this process has it loaded.
fn loaded_encoder(dir: &Path) -> Option<Arc<BertEncoder>> {
    let key = folder_key(dir)?;
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    loaded.retain(|(_, weak)| weak.strong_count() > 0);
    loaded
        .iter()
        .find(|(k, _)| *k == key)
        .and_then(|(_, weak)| weak.upgrade())
}

/// The encoder of `dir`: the one already loaded, else read from disk.
fn shared_encoder(dir: &Path) -> Result<Arc<BertEncoder>, LoadError> {
    if let Some(encoder) = loaded_encoder(dir) {
        return Ok(encoder);
    }
    let key = folder_key(dir);
    // Loaded without holding the lock: another model may load meanwhile. Two first loads of
    // one folder racing both read it; the later one is kept, both work.
    let encoder = Arc::new(BertEncoder::from_dir(dir)?);
    if let Some(key) = key {
        let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
        loaded.push((key, Arc::downgrade(&encoder)));
    }
    Ok(encoder)
}

pub struct LocalModel {
    dir: PathBuf,
    info: ModelInfo,
    /// Built on the first vector that is not in the cache: a start whose tool vectors are all
    /// cached reads no tensor (for MiniLM about 0.2 s and 45 MB saved until the first query).
    encoder: Mutex<Option<Arc<BertEncoder>>>,
    /// Shared by the worker-pool tasks of every embed call (a lookup pass, then an append).
    cache: Option<Mutex<VectorCache>>,
    cache_file: Option<String>,
    /// The cache's counts as of the last time they could be read without waiting.
    cache_snapshot: Mutex<CacheStats>,
    computed: AtomicUsize,
    cached: AtomicUsize,
}

/// Counts for the host: how much work the model did and how much the cache saved.
#[derive(Clone, Debug, Default)]
pub struct LocalStats {
    /// Vectors computed by the model.
    pub computed: usize,
    /// Vectors served from the disk cache.
    pub cached: usize,
    pub cache_file: Option<String>,
    pub cache: CacheStats,
}

impl LocalModel {
    /// Loads the model folder `dir` (or shares the copy already loaded); with `cache_dir`,
    /// tool vectors are cached there.
    ///
    /// The files are read and checked (configuration, vocabulary, the weights' header; an
    /// error names what is wrong) and hashed for the cache's key, but the encoder is only built
    /// when a vector has to be computed.
    pub fn load(dir: &Path, cache_dir: Option<&Path>) -> Result<Self, LoadError> {
        let encoder = loaded_encoder(dir);
        let info = match &encoder {
            Some(e) => e.info().clone(),
            None => {
                let files = ModelFiles::read_dir(dir)?;
                let name = dir.join(WEIGHTS_FILE).display().to_string();
                BertEncoder::inspect(&files, &name).map_err(LoadError::Invalid)?
            }
        };
        let cache = cache_dir.map(|d| VectorCache::new(d, info.identity, info.dimensions));
        let cache_file = cache.as_ref().map(|c| c.path().display().to_string());
        Ok(LocalModel {
            dir: dir.to_owned(),
            info,
            encoder: Mutex::new(encoder),
            cache: cache.map(Mutex::new),
            cache_file,
            cache_snapshot: Mutex::new(CacheStats::default()),
            computed: AtomicUsize::new(0),
            cached: AtomicUsize::new(0),
        })
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// Whether the encoder has been built (a vector was computed).
    pub fn encoder_loaded(&self) -> bool {
        self.encoder
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// The encoder, built on first use from the files `load` checked.
    fn encoder(&self) -> Result<Arc<BertEncoder>, LoadError> {
        let mut slot = self.encoder.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(encoder) = &*slot {
            return Ok(encoder.clone());
        }
        let encoder = shared_encoder(&self.dir)?;
        if encoder.info().identity != self.info.identity {
            // Vectors cached under the old identity must not be mixed with the new model's.
            return Err(LoadError::Invalid(format!(
                "the model files in {} changed after they were loaded; load the model again",
                self.dir.display()
            )));
        }
        *slot = Some(encoder.clone());
        Ok(encoder)
    }

    /// One unit vector per text, embedded as texts searched ([`Role::Passage`]: e5's
    /// `passage: ` prefix). With `use_cache` (tool texts; queries are too many and too
    /// varied to keep), vectors come from the disk cache when it has them and the rest are
    /// computed, then appended to it.
    /// Fails only when the encoder cannot be built (its files changed or vanished since
    /// `load`).
    pub fn embed(&self, texts: &[String], use_cache: bool) -> Result<Vec<Vec<f32>>, LoadError> {
        let cache = self.cache.as_ref().filter(|_| use_cache);
        let Some(cache) = cache else {
            return self.compute(texts.iter().map(String::as_str).collect(), Role::Passage);
        };
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        let mut misses = Vec::new();
        {
            let mut cache = lock(cache);
            for (i, text) in texts.iter().enumerate() {
                let key = cache.key(text);
                match cache.get(&key) {
                    Some(v) => out[i] = Some(v.to_vec()),
                    None => misses.push((i, key)),
                }
            }
            *lock_snapshot(&self.cache_snapshot) = cache.stats().clone();
        }
        self.cached
            .fetch_add(texts.len() - misses.len(), Ordering::Relaxed);
        if !misses.is_empty() {
            // Computed without holding the lock: other batches may read the cache meanwhile.
            let texts = misses.iter().map(|&(i, _)| texts[i].as_str()).collect();
            let vectors = self.compute(texts, Role::Passage)?;
            let mut entries = Vec::with_capacity(misses.len());
            for ((i, key), vector) in misses.into_iter().zip(vectors) {
                entries.push((key, vector.clone()));
                out[i] = Some(vector);
            }
            let mut cache = lock(cache);
            cache.insert(entries);
            *lock_snapshot(&self.cache_snapshot) = cache.stats().clone();
        }
        Ok(out.into_iter().map(Option::unwrap_or_default).collect())
    }

    /// A search query's vectors for the hybrid search: the whole query's, then one per
    /// sentence of its [`query_sentences`]. With sentences the encoder reads only them, and the
    /// whole query's vector is derived from theirs ([`whole_query_vector`]): each token passes
    /// through the model once instead of twice, which halves a long request's time. Embedded
    /// as requests ([`Role::Query`]: e5's `query: ` prefix before the query and each sentence).
    pub fn embed_query(&self, query: &str) -> Result<Vec<Vec<f32>>, LoadError> {
        let sentences = query_sentences(query);
        if sentences.is_empty() {
            return self.compute(vec![query], Role::Query);
        }
        let vectors = self.compute(sentences.clone(), Role::Query)?;
        let whole = whole_query_vector(&sentences, &vectors);
        Ok(std::iter::once(whole).chain(vectors).collect())
    }

    fn compute(&self, texts: Vec<&str>, role: Role) -> Result<Vec<Vec<f32>>, LoadError> {
        let encoder = self.encoder()?;
        self.computed.fetch_add(texts.len(), Ordering::Relaxed);
        Ok(encoder.embed_parallel(&texts, role))
    }

    /// Never waits for the cache: the stats are read on the JS thread, and a worker may hold
    /// the cache while it reads the file; then the counts of the last finished call are given.
    pub fn stats(&self) -> LocalStats {
        let (cache_file, cache) = match &self.cache {
            Some(c) => {
                if let Ok(c) = c.try_lock() {
                    *lock_snapshot(&self.cache_snapshot) = c.stats().clone();
                }
                let path = self.cache_file.clone();
                (path, lock_snapshot(&self.cache_snapshot).clone())
            }
            None => (None, CacheStats::default()),
        };
        LocalStats {
            computed: self.computed.load(Ordering::Relaxed),
            cached: self.cached.load(Ordering::Relaxed),
            cache_file,
            cache,
        }
    }

    /// The cache's warnings since the last call.
    pub fn take_warnings(&self) -> Vec<String> {
        self.cache
            .as_ref()
            .map(|c| lock(c).take_warnings())
            .unwrap_or_default()
    }
}

/// The cache's state stays consistent even if a holder panicked (it only ever adds vectors).
fn lock(cache: &Mutex<VectorCache>) -> std::sync::MutexGuard<'_, VectorCache> {
    cache.lock().unwrap_or_else(|e| e.into_inner())
}

fn lock_snapshot(s: &Mutex<CacheStats>) -> std::sync::MutexGuard<'_, CacheStats> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn tiny() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tiny-bert")
    }

    #[test]
    fn a_query_is_embedded_per_sentence_with_the_whole_derived_from_them() {
        let model = LocalModel::load(&tiny(), None).unwrap();
        let request = "Find me a song by Queen. Also tell me a joke about cats!";
        let sentences = [
            "Find me a song by Queen.",
            "Also tell me a joke about cats!",
        ];
        let got = model.embed_query(request).unwrap();
        let each = model.embed(&sentences.map(String::from), false).unwrap();
        assert_eq!(got[1..], each[..]);
        assert_eq!(got[0], whole_query_vector(&sentences, &each));
        // The model read each sentence once and the whole request never.
        assert_eq!(model.stats().computed, 4);
        // One sentence: the query's own vector, as `embed` gives it.
        let single = "find me a song by queen";
        assert_eq!(
            model.embed_query(single).unwrap(),
            model.embed(&[single.to_owned()], false).unwrap()
        );
    }

    #[test]
    fn a_second_model_instance_reads_the_first_ones_vectors_from_disk() {
        let dir = std::env::temp_dir().join(format!("toolreg-local-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let texts: Vec<String> = ["read a file", "send an email", "read a file", "weather"]
            .map(String::from)
            .to_vec();

        let first = LocalModel::load(&tiny(), Some(&dir)).unwrap();
        assert!(!first.encoder_loaded());
        let a = first.embed(&texts, true).unwrap();
        assert!(first.encoder_loaded());
        let s = first.stats();
        // The repeated text is computed twice within one batch (both missed), cached once.
        assert_eq!((s.computed, s.cached, s.cache.written), (4, 0, 4));
        assert!(first.take_warnings().is_empty());

        let second = LocalModel::load(&tiny(), Some(&dir)).unwrap();
        // One copy of the weights, two caches and two sets of counters.
        assert!(Arc::ptr_eq(
            &first.encoder().unwrap(),
            &second.encoder().unwrap()
        ));
        let b = second.embed(&texts, true).unwrap();
        let s = second.stats();
        assert_eq!((s.computed, s.cached, s.cache.loaded), (0, 4, 3));
        assert_eq!(a, b);
        // Queries bypass the cache.
        second.embed(&["a query".to_owned()], false).unwrap();
        assert_eq!(second.stats().computed, 1);
        assert_eq!(second.stats().cache.written, 0);

        let uncached = LocalModel::load(&tiny(), None).unwrap();
        assert_eq!(uncached.embed(&texts, true).unwrap(), a);
        assert_eq!(uncached.stats().cache_file, None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_start_with_every_vector_cached_builds_no_encoder() {
        let dir = std::env::temp_dir().join(format!("toolreg-local-lazy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // A copy of the tiny model: no other test shares (or holds) its encoder.
        let model = dir.join("model");
        std::fs::create_dir_all(&model).unwrap();
        for f in [CONFIG_FILE, VOCAB_FILE, WEIGHTS_FILE] {
            std::fs::copy(tiny().join(f), model.join(f)).unwrap();
        }
        let texts = vec!["read a file".to_owned(), "send an email".to_owned()];
        let cache = dir.join("cache");
        let vectors = {
            let first = LocalModel::load(&model, Some(&cache)).unwrap();
            first.embed(&texts, true).unwrap()
        };
        // The first model is gone with its encoder.
        let second = LocalModel::load(&model, Some(&cache)).unwrap();
        assert_eq!(second.embed(&texts, true).unwrap(), vectors);
        assert!(!second.encoder_loaded());
        assert_eq!(
            second.info().identity,
            BertEncoder::from_dir(&model).unwrap().info().identity
        );

        // Weights changed on disk after load: refused rather than mixed with cached vectors.
        let mut bytes = std::fs::read(model.join(WEIGHTS_FILE)).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(model.join(WEIGHTS_FILE), bytes).unwrap();
        let err = second.embed(&["new text".to_owned()], true).err().unwrap();
        assert!(
            err.to_string().contains("changed after they were loaded"),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
