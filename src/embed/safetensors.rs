//! A reader for the safetensors format: an 8-byte little-endian header length, a JSON header
//! `{ name: { dtype, shape, data_offsets: [begin, end] }, "__metadata__"?: {...} }`, then the
//! raw little-endian tensor data (offsets relative to the end of the header).
//!
//! Parsed here rather than with the `safetensors` crate: the format is a page long, and the
//! encoder needs only "this tensor as f32 with this shape", with errors that name the file and
//! the tensor.

use std::collections::HashMap;

use serde_json::Value;

/// Headers of real models are tens of kilobytes; anything this large is not a safetensors file.
const MAX_HEADER: u64 = 100 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    F32,
    F16,
    BF16,
    /// Any other dtype (I64 position ids, …): listed, never read as floats.
    Other,
}

impl Dtype {
    fn size(self, name: &str) -> Option<usize> {
        match self {
            Dtype::F32 => Some(4),
            Dtype::F16 | Dtype::BF16 => Some(2),
            Dtype::Other => match name {
                "F64" | "I64" | "U64" => Some(8),
                "I32" | "U32" => Some(4),
                "I16" | "U16" => Some(2),
                "I8" | "U8" | "BOOL" | "F8_E4M3" | "F8_E5M2" => Some(1),
                _ => None,
            },
        }
    }
}

struct Entry {
    dtype: Dtype,
    dtype_name: String,
    shape: Vec<usize>,
    begin: usize,
    end: usize,
}

/// The file's bytes with its parsed header.
pub struct SafeTensors<'a> {
    /// For error messages.
    file: String,
    bytes: &'a [u8],
    data_start: usize,
    entries: HashMap<String, Entry>,
}

/// A tensor's values converted to f32.
pub struct Tensor {
    pub values: Vec<f32>,
}

impl<'a> SafeTensors<'a> {
    /// Parses `bytes` (the content of `file`, named in errors) and checks every entry's
    /// offsets against its dtype, shape and the data size.
    pub fn parse(file: &str, bytes: &'a [u8]) -> Result<Self, String> {
        let bad = |what: String| format!("{file}: not a valid safetensors file: {what}");
        if bytes.len() < 8 {
            return Err(bad(format!(
                "{} bytes, shorter than its header length",
                bytes.len()
            )));
        }
        let header_len = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        if header_len > MAX_HEADER || 8 + header_len > bytes.len() as u64 {
            return Err(bad(format!(
                "header length {header_len} does not fit in the file's {} bytes",
                bytes.len()
            )));
        }
        let data_start = 8 + header_len as usize;
        let header: serde_json::Map<String, Value> = serde_json::from_slice(&bytes[8..data_start])
            .map_err(|e| bad(format!("header is not a JSON object ({e})")))?;
        let data_len = bytes.len() - data_start;
        let mut entries = HashMap::with_capacity(header.len());
        for (name, info) in header {
            if name == "__metadata__" {
                continue;
            }
            let odd = |what: &str| format!("{file}: tensor {name:?} {what}");
            let dtype_name = info["dtype"]
                .as_str()
                .ok_or_else(|| odd("has no dtype"))?
                .to_owned();
            let dtype = match dtype_name.as_str() {
                "F32" => Dtype::F32,
                "F16" => Dtype::F16,
                "BF16" => Dtype::BF16,
                _ => Dtype::Other,
            };
            let shape: Vec<usize> = info["shape"]
                .as_array()
                .and_then(|dims| {
                    dims.iter()
                        .map(|d| d.as_u64().map(|d| d as usize))
                        .collect()
                })
                .ok_or_else(|| odd("has no valid shape"))?;
            let offsets: Option<Vec<usize>> = info["data_offsets"]
                .as_array()
                .and_then(|o| o.iter().map(|x| x.as_u64().map(|x| x as usize)).collect());
            let [begin, end] = offsets.as_deref().unwrap_or_default() else {
                return Err(odd("has no valid data_offsets"));
            };
            let (begin, end) = (*begin, *end);
            let numel = checked_numel(&shape).ok_or_else(|| odd("has an overflowing shape"))?;
            let size = dtype
                .size(&dtype_name)
                .ok_or_else(|| odd(&format!("has an unknown dtype {dtype_name}")))?;
            if begin > end || end > data_len || Some(end - begin) != numel.checked_mul(size) {
                return Err(odd(&format!(
                    "has data_offsets [{begin}, {end}] that do not hold {numel} {dtype_name} values \
                     within the {data_len} bytes of data"
                )));
            }
            entries.insert(
                name,
                Entry {
                    dtype,
                    dtype_name,
                    shape,
                    begin,
                    end,
                },
            );
        }
        Ok(SafeTensors {
            file: file.to_owned(),
            bytes,
            data_start,
            entries,
        })
    }

    /// The tensor `name` (or `bert.<name>`, as checkpoints of BERT task models name it) as f32,
    /// checked to have `shape`.
    pub fn tensor(&self, name: &str, shape: &[usize]) -> Result<Tensor, String> {
        let (name, entry) = self.entry(name)?;
        if entry.shape != shape {
            return Err(format!(
                "{}: tensor {name:?} has shape {:?}, expected {shape:?} (from config.json)",
                self.file, entry.shape
            ));
        }
        let raw = &self.bytes[self.data_start + entry.begin..self.data_start + entry.end];
        let values = match entry.dtype {
            Dtype::F32 => raw
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            Dtype::F16 => raw
                .chunks_exact(2)
                .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
                .collect(),
            Dtype::BF16 => raw
                .chunks_exact(2)
                .map(|b| f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16))
                .collect(),
            Dtype::Other => {
                return Err(format!(
                    "{}: tensor {name:?} has dtype {}, expected F32, F16 or BF16",
                    self.file, entry.dtype_name
                ));
            }
        };
        Ok(Tensor { values })
    }

    /// The raw F16 bits of tensor `name`, or `None` when it is stored in another dtype (the
    /// word-embedding table is kept in F16 when it comes that way: half the memory, one row
    /// converted per token).
    pub fn f16_bits(&self, name: &str, shape: &[usize]) -> Result<Option<Vec<u16>>, String> {
        let (name, entry) = self.entry(name)?;
        if entry.shape != shape {
            return Err(format!(
                "{}: tensor {name:?} has shape {:?}, expected {shape:?} (from config.json)",
                self.file, entry.shape
            ));
        }
        if entry.dtype != Dtype::F16 {
            return Ok(None);
        }
        let raw = &self.bytes[self.data_start + entry.begin..self.data_start + entry.end];
        Ok(Some(
            raw.chunks_exact(2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
                .collect(),
        ))
    }

    /// The stored bytes of tensor `name`, checked to be of `dtype` (as the file names it: `U8`,
    /// `I32`, ...) and, when given, `shape`: for data that is not plain floats (quantised
    /// blocks, a tokenizer's pieces), which its reader decodes.
    pub fn raw(
        &self,
        name: &str,
        dtype: &str,
        shape: Option<&[usize]>,
    ) -> Result<&'a [u8], String> {
        let (name, entry) = self.entry(name)?;
        if entry.dtype_name != dtype {
            return Err(format!(
                "{}: tensor {name:?} has dtype {}, expected {dtype}",
                self.file, entry.dtype_name
            ));
        }
        if let Some(shape) = shape.filter(|s| *s != entry.shape) {
            return Err(format!(
                "{}: tensor {name:?} has shape {:?}, expected {shape:?}",
                self.file, entry.shape
            ));
        }
        Ok(&self.bytes[self.data_start + entry.begin..self.data_start + entry.end])
    }

    /// The shape of tensor `name`, if the file has it.
    pub fn shape(&self, name: &str) -> Option<&[usize]> {
        self.entry(name).ok().map(|(_, e)| e.shape.as_slice())
    }

    /// The dtype of tensor `name` as the file names it (`F32`, `F16`, `I64`, …).
    pub fn dtype(&self, name: &str) -> Option<&str> {
        self.entry(name).ok().map(|(_, e)| e.dtype_name.as_str())
    }

    fn entry(&self, name: &str) -> Result<(String, &Entry), String> {
        if let Some(e) = self.entries.get(name) {
            return Ok((name.to_owned(), e));
        }
        let prefixed = format!("bert.{name}");
        match self.entries.get(&prefixed) {
            Some(e) => Ok((prefixed, e)),
            None => Err(format!(
                "{}: tensor {name:?} is missing (the file has {} tensors; is this a BERT model?)",
                self.file,
                self.entries.len()
            )),
        }
    }
}

fn checked_numel(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}

/// IEEE 754 half → single precision, exact for every value (subnormals, infinities, NaN).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exp = u32::from((h >> 10) & 0x1f);
    let mant = u32::from(h & 0x3ff);
    let bits = match (exp, mant) {
        (0, 0) => sign,
        // Subnormal: value = mant × 2^-24, exact in f32.
        (0, m) => return sign_of(h) * (m as f32) * (1.0 / 16_777_216.0),
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, m) => sign | 0x7fc0_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

fn sign_of(h: u16) -> f32 {
    if h & 0x8000 != 0 { -1.0 } else { 1.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn f16_conversion_is_exact_for_every_class_of_value() {
        assert_eq!(f16_to_f32(0x0000), 0.0);
        assert!(f16_to_f32(0x8000).is_sign_negative());
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x83ff), -(1023.0 * 2f32.powi(-24)));
        assert_eq!(f16_to_f32(0x0400), 2f32.powi(-14));
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
    }

    #[test]
    fn reads_f32_f16_and_bf16_tensors() {
        let mut data = Vec::new();
        data.extend_from_slice(&1.5f32.to_le_bytes());
        data.extend_from_slice(&(-2.0f32).to_le_bytes());
        data.extend_from_slice(&0x3c00u16.to_le_bytes());
        data.extend_from_slice(&0x3f80u16.to_le_bytes());
        let header = r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F16","shape":[1,1],"data_offsets":[8,10]},"bert.c":{"dtype":"BF16","shape":[1],"data_offsets":[10,12]}}"#;
        let bytes = file(header, &data);
        let st = SafeTensors::parse("x.safetensors", &bytes).unwrap();
        assert_eq!(st.tensor("a", &[2]).unwrap().values, vec![1.5, -2.0]);
        assert_eq!(st.tensor("b", &[1, 1]).unwrap().values, vec![1.0]);
        assert_eq!(st.dtype("b"), Some("F16"));
        assert_eq!(st.f16_bits("b", &[1, 1]).unwrap(), Some(vec![0x3c00]));
        assert_eq!(st.f16_bits("a", &[2]).unwrap(), None);
        // The `bert.` prefix of task-model checkpoints is looked through.
        assert_eq!(st.tensor("c", &[1]).unwrap().values, vec![1.0]);
    }

    #[test]
    fn errors_name_the_file_and_the_tensor() {
        let header = r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"ids":{"dtype":"I64","shape":[1],"data_offsets":[8,16]}}"#;
        let bytes = file(header, &[0; 16]);
        let st = SafeTensors::parse("m.safetensors", &bytes).unwrap();
        let err = |r: Result<Tensor, String>| r.err().unwrap();
        assert_eq!(
            err(st.tensor("a", &[3])),
            "m.safetensors: tensor \"a\" has shape [2], expected [3] (from config.json)"
        );
        assert!(err(st.tensor("missing", &[1])).contains("tensor \"missing\" is missing"));
        assert!(err(st.tensor("ids", &[1])).contains("has dtype I64, expected F32, F16 or BF16"));

        let bad = |bytes: Vec<u8>| SafeTensors::parse("m.safetensors", &bytes).err().unwrap();
        assert!(bad(vec![1, 2, 3]).starts_with("m.safetensors: not a valid safetensors file"));
        assert!(bad(file("{", &[])).contains("header is not a JSON object"));
        let mut huge = file("{}", &[]);
        huge[..8].copy_from_slice(&1_000_000u64.to_le_bytes());
        assert!(bad(huge).contains("does not fit"));
        // Offsets past the data, or not matching shape × dtype size.
        let short = r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#;
        assert!(bad(file(short, &[0; 8])).contains("tensor \"a\" has data_offsets [0, 16]"));
        let odd = r#"{"a":{"dtype":"F16","shape":[4],"data_offsets":[0,4]}}"#;
        assert!(bad(file(odd, &[0; 8])).contains("do not hold 4 F16 values"));
        let unknown = r#"{"a":{"dtype":"Q4","shape":[4],"data_offsets":[0,4]}}"#;
        assert!(bad(file(unknown, &[0; 8])).contains("unknown dtype Q4"));
    }

    #[test]
    fn raw_bytes_are_checked_for_dtype_and_shape() {
        let header = r#"{"q":{"dtype":"U8","shape":[2,2],"data_offsets":[0,4]},"f":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}"#;
        let bytes = file(header, &[1, 2, 3, 4, 0, 0, 128, 63]);
        let st = SafeTensors::parse("m.safetensors", &bytes).unwrap();
        assert_eq!(st.raw("q", "U8", Some(&[2, 2])).unwrap(), &[1, 2, 3, 4]);
        assert_eq!(st.raw("q", "U8", None).unwrap().len(), 4);
        assert_eq!(
            st.raw("q", "U8", Some(&[4])).err().unwrap(),
            "m.safetensors: tensor \"q\" has shape [2, 2], expected [4]"
        );
        assert_eq!(
            st.raw("f", "U8", None).err().unwrap(),
            "m.safetensors: tensor \"f\" has dtype F32, expected U8"
        );
    }
}
