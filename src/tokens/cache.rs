//! The built encoder tables on disk, so that a new process counts tokens without building them.
//!
//! Building an encoding's tables from its rank file takes one to two seconds of one core; every
//! process that counts tokens paid that before its first count (an app's start, each CLI
//! command, `toolreg serve` before its first answer). Read back from this cache they take tens of
//! milliseconds. The host names the folder (`set_dir`, from JS: the per-user cache folder); with
//! none, the tables are built as before.
//!
//! The tables' own deserializer trusts its bytes (the Aho-Corasick automata are read unchecked),
//! so a file is read only when its SHA-256 matches the digest written with it (a torn or corrupt
//! file is rebuilt and rewritten), and only by a build of the same crate versions (they are in
//! the file name). The folder is the user's own: whoever can write there can already change what
//! the user runs.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use bpe::byte_pair_encoding::BytePairEncoding;
use sha2::{Digest, Sha256};

static DIR: OnceLock<PathBuf> = OnceLock::new();

/// The bytes of a SHA-256 digest, which start every cache file.
const DIGEST_BYTES: usize = 32;

/// Where the tables are cached; the first call wins (set before the first count).
pub fn set_dir(dir: PathBuf) {
    let _ = DIR.set(dir);
}

/// The encoding `name`'s tables from the cache, else `build()`'s, saved for the next process.
/// `source` is what they are built from: another rank file is another cache file.
pub fn load_or_build(
    name: &str,
    source: &[u8],
    build: impl FnOnce() -> BytePairEncoding,
) -> BytePairEncoding {
    let Some(dir) = DIR.get() else {
        return build();
    };
    let file = dir.join(file_name(name, source));
    if let Some(bpe) = read(&file) {
        return bpe;
    }
    let bpe = build();
    // A cache that cannot be written only costs the next process the build.
    let _ = write(&file, &bpe);
    bpe
}

fn file_name(name: &str, source: &[u8]) -> String {
    let digest = Sha256::digest(source);
    let source_id: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{name}-{source_id}-{}.bin",
        env!("TOOLREG_TOKENIZER_LAYOUT")
    )
}

fn read(file: &Path) -> Option<BytePairEncoding> {
    let bytes = fs::read(file).ok()?;
    if bytes.len() < DIGEST_BYTES {
        return None;
    }
    let (digest, payload) = bytes.split_at(DIGEST_BYTES);
    if Sha256::digest(payload).as_slice() != digest {
        return None;
    }
    postcard::from_bytes(payload).ok()
}

fn write(file: &Path, bpe: &BytePairEncoding) -> std::io::Result<()> {
    let payload = postcard::to_stdvec(bpe).map_err(std::io::Error::other)?;
    let mut bytes = Sha256::digest(&payload).to_vec();
    bytes.extend_from_slice(&payload);
    fs::create_dir_all(file.parent().unwrap_or(Path::new(".")))?;
    // Written aside and renamed: a process reading meanwhile sees no file or a whole one.
    let aside = file.with_extension(format!("{}.tmp", std::process::id()));
    fs::write(&aside, &bytes)?;
    fs::rename(&aside, file).inspect_err(|_| {
        let _ = fs::remove_file(&aside);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small_bpe() -> BytePairEncoding {
        let tokens: Vec<Vec<u8>> = (0u8..=255)
            .map(|b| vec![b])
            .chain([b"ab".to_vec(), b"abc".to_vec()])
            .collect();
        BytePairEncoding::from_dictionary(tokens, None)
    }

    #[test]
    fn a_written_file_reads_back_and_a_changed_byte_is_refused() {
        let dir =
            std::env::temp_dir().join(format!("toolreg-tokenizer-cache-{}", std::process::id()));
        let file = dir.join(file_name("small", b"ranks"));
        let built = small_bpe();
        write(&file, &built).unwrap();
        let read_back = read(&file).expect("a whole file reads back");
        assert_eq!(read_back.count(b"abcab"), built.count(b"abcab"));

        let mut bytes = fs::read(&file).unwrap();
        for at in [0, DIGEST_BYTES, bytes.len() - 1] {
            bytes[at] ^= 1;
            fs::write(&file, &bytes).unwrap();
            assert!(read(&file).is_none(), "a change at byte {at} is caught");
            bytes[at] ^= 1;
        }
        fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
        assert!(read(&file).is_none(), "a torn file is caught");
        fs::write(&file, b"short").unwrap();
        assert!(read(&file).is_none());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_file_name_follows_the_source_and_the_crate_versions() {
        assert_ne!(file_name("o200k_base", b"a"), file_name("o200k_base", b"b"));
        assert!(file_name("o200k_base", b"a").contains(env!("TOOLREG_TOKENIZER_LAYOUT")));
        assert!(!env!("TOOLREG_TOKENIZER_LAYOUT").contains("unknown"));
    }
}
