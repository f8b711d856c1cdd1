//! The encoder's two hot loops in forms a CPU runs fast: products of a few token rows with a
//! weight matrix, and GELU.
//!
//! `matrixmultiply` packs both operands into its own layout on every call. For one short text
//! (a query: ~10 token rows) that means copying every weight matrix of the model (42 MB) per
//! text, which was two thirds of a query's time. [`xw`] multiplies the rows directly against
//! the weights as the encoder keeps them: transposed and [`pack`]ed once at load into panels
//! of 16 outputs, each panel `[inputs, 16]` and contiguous, so the weights of 16 outputs for
//! one input are one vector load and a block of outputs reads its panels as plain streams
//! (the columns of a row-major `[inputs, outputs]` matrix are read a page apart per input,
//! which the prefetchers do not follow: that layout was 5× slower). Each step broadcasts one
//! input value of a row and multiply-adds it into the accumulators of a block of outputs — 8
//! rows × 48 outputs with AVX-512, 6 × 16 with AVX2 — reading F16 weights as they are (F16C
//! widens them in the load). No horizontal sums, and a widened weight vector serves every row
//! of the block.
//!
//! Every output is one chain of fused multiply-adds in input order, started from the value
//! already in `out`, in every kernel and in the scalar edge loop alike, so a result depends on
//! neither the CPU's vector width nor where a row or column sits in a block: a text gets the
//! same vector alone, in any batch, on any thread. `matrixmultiply` serves the other CPUs
//! (no AVX2/FMA/F16C, or not x86-64).

/// Which arithmetic the direct kernels do; a change of it changes vectors in their last bits,
/// so it is part of a model's cache identity (vectors computed before are not mixed in).
pub const ARITHMETIC: &str = "xw: one fused multiply-add chain per output, in input order";

/// Whether [`xw`] has its fast path on this CPU (AVX2, FMA, and F16C for F16 weights).
pub fn direct_available() -> bool {
    #[cfg(test)]
    if tests::PORTABLE.get() {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
            && std::is_x86_feature_detected!("f16c")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A value a weight matrix is stored as: f32, or the bits of an IEEE half (`u16`), which the
/// kernel widens as it loads them (half the memory and half the bytes streamed per text).
pub trait Weight: Copy {
    // Read by the x86-64 kernels only; elsewhere the type is just the weights' storage.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    fn to_f32(self) -> f32;
}

impl Weight for f32 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
}

impl Weight for u16 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        super::safetensors::f16_to_f32(self)
    }
}

/// A row-major matrix view: `rows` rows of `cols` values, row `r` at `data[r * stride..]`.
#[derive(Clone, Copy)]
pub struct Rows<'a, T = f32> {
    pub data: &'a [T],
    pub rows: usize,
    pub cols: usize,
    pub stride: usize,
}

impl<T> Rows<'_, T> {
    fn fits(&self) -> bool {
        self.rows == 0 || (self.rows - 1) * self.stride + self.cols <= self.data.len()
    }
}

/// The columns of a group, the width of a panel: one AVX-512 vector, two AVX2 vectors.
pub const GROUP: usize = 16;

/// The right operand of [`xw`]: `rows × cols` values with the columns in groups of
/// [`GROUP`], value `(r, c)` at `data[(c / GROUP) * group_stride + r * stride + c % GROUP]`.
/// A row-major matrix is the case `group_stride = GROUP` ([`From<Rows>`]); a [`pack`]ed one
/// has `stride = GROUP` and `group_stride = GROUP * rows` ([`packed`]).
#[derive(Clone, Copy)]
pub struct Panels<'a, T> {
    pub data: &'a [T],
    pub rows: usize,
    pub cols: usize,
    pub stride: usize,
    pub group_stride: usize,
}

impl<T> Panels<'_, T> {
    fn fits(&self) -> bool {
        if self.rows == 0 || self.cols == 0 {
            return true;
        }
        // The last value of a group lies furthest in its last row; the last group and the
        // full one before it bound every other group.
        let last = (self.cols - 1) / GROUP;
        let end =
            |g: usize, width: usize| g * self.group_stride + (self.rows - 1) * self.stride + width;
        end(last, self.cols - last * GROUP) <= self.data.len()
            && (last == 0 || end(last - 1, GROUP) <= self.data.len())
    }
}

impl<'a, T> From<Rows<'a, T>> for Panels<'a, T> {
    fn from(m: Rows<'a, T>) -> Self {
        Panels {
            data: m.data,
            rows: m.rows,
            cols: m.cols,
            stride: m.stride,
            group_stride: GROUP,
        }
    }
}

/// `wᵀ` for a row-major `w` of `outputs × inputs` (a weight matrix as a model file stores
/// it), in panels of [`GROUP`] outputs: panel `g` holds `[inputs, GROUP]` contiguous, the
/// last one padded with `T::default()`. Read it with [`packed`].
pub fn pack<T: Copy + Default>(w: &[T], outputs: usize, inputs: usize) -> Vec<T> {
    assert_eq!(w.len(), outputs * inputs, "pack: shape");
    let groups = outputs.div_ceil(GROUP);
    let mut out = vec![T::default(); groups * inputs * GROUP];
    for (o, row) in w.chunks_exact(inputs.max(1)).take(outputs).enumerate() {
        let panel = &mut out[(o / GROUP) * inputs * GROUP..][..inputs * GROUP];
        for (c, &v) in row.iter().enumerate() {
            panel[c * GROUP + o % GROUP] = v;
        }
    }
    out
}

/// The view of [`pack`]'s result: `inputs × outputs`.
pub fn packed<T>(data: &[T], inputs: usize, outputs: usize) -> Panels<'_, T> {
    Panels {
        data,
        rows: inputs,
        cols: outputs,
        stride: GROUP,
        group_stride: GROUP * inputs,
    }
}

/// `out[i][j] += Σ_c x[i][c] · w[c][j]` for every row `i` of `x` and column `j` of `w` (so
/// `out += x · w`), each sum one fused multiply-add per `c`, in order, onto `out[i][j]`;
/// `out` row-major with row stride `out_stride`. Needs [`direct_available`].
pub fn xw<W: Weight + avx2::Load>(x: Rows, w: Panels<W>, out: &mut [f32], out_stride: usize) {
    assert!(
        x.cols == w.rows && x.fits() && w.fits(),
        "xw: operand shapes"
    );
    assert!(
        x.rows == 0 || w.cols == 0 || (x.rows - 1) * out_stride + w.cols <= out.len(),
        "xw: output shape"
    );
    assert!(direct_available(), "xw: needs AVX2, FMA and F16C");
    #[cfg(target_arch = "x86_64")]
    {
        let raw = avx2::Raw {
            x: x.data.as_ptr(),
            xs: x.stride,
            m: x.rows,
            w: w.data.as_ptr(),
            ws: w.stride,
            wg: w.group_stride,
            n: w.cols,
            k: x.cols,
            out: out.as_mut_ptr(),
            os: out_stride,
        };
        // SAFETY: the CPU has AVX2, FMA and F16C (asserted) and AVX-512F where that kernel
        // runs; every value read or written lies within its slice (asserted above).
        unsafe {
            if avx512_available() {
                avx512::xw(raw)
            } else {
                avx2::xw(raw)
            }
        }
    }
}

/// Whether the AVX-512 kernel runs (it doubles the lanes and registers of the AVX2 one).
#[cfg(target_arch = "x86_64")]
fn avx512_available() -> bool {
    #[cfg(test)]
    if tests::NO_AVX512.get() {
        return false;
    }
    std::is_x86_feature_detected!("avx512f")
}

#[cfg(not(target_arch = "x86_64"))]
mod avx2 {
    /// No direct kernel off x86-64 ([`super::direct_available`] is false there).
    pub trait Load {}
    impl Load for f32 {}
    impl Load for u16 {}
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Weight;
    use std::arch::x86_64::*;

    /// Eight (sixteen) consecutive weights as f32 lanes.
    pub trait Load: Weight {
        /// # Safety
        /// Eight values readable at `p`; AVX2 and F16C available.
        unsafe fn load8(p: *const Self) -> __m256;
        /// # Safety
        /// Sixteen values readable at `p`; AVX-512F available.
        unsafe fn load16(p: *const Self) -> __m512;
    }

    impl Load for f32 {
        #[inline(always)]
        unsafe fn load8(p: *const f32) -> __m256 {
            unsafe { _mm256_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn load16(p: *const f32) -> __m512 {
            unsafe { _mm512_loadu_ps(p) }
        }
    }

    impl Load for u16 {
        #[inline(always)]
        unsafe fn load8(p: *const u16) -> __m256 {
            unsafe { _mm256_cvtph_ps(_mm_loadu_si128(p.cast())) }
        }
        #[inline(always)]
        unsafe fn load16(p: *const u16) -> __m512 {
            unsafe { _mm512_cvtph_ps(_mm256_loadu_si256(p.cast())) }
        }
    }

    /// The operands as raw parts: `m` rows of x (stride `xs`) of `k` values; `k` rows of w
    /// (stride `ws`, groups of 16 columns `wg` apart: [`super::Panels`]) of `n` values; `out`
    /// with row stride `os`.
    #[derive(Clone, Copy)]
    pub(super) struct Raw<W> {
        pub x: *const f32,
        pub xs: usize,
        pub m: usize,
        pub w: *const W,
        pub ws: usize,
        pub wg: usize,
        pub n: usize,
        pub k: usize,
        pub out: *mut f32,
        pub os: usize,
    }

    impl<W> Raw<W> {
        /// Where column `j` of w starts.
        #[inline(always)]
        pub(super) fn col(&self, j: usize) -> usize {
            (j / super::GROUP) * self.wg + j % super::GROUP
        }

        /// The same product from row `i` and column `j` on.
        ///
        /// # Safety
        /// `i <= m` and `j <= n`.
        #[inline(always)]
        pub(super) unsafe fn from(self, i: usize, j: usize) -> Self {
            unsafe {
                Raw {
                    x: self.x.add(i * self.xs),
                    m: self.m - i,
                    w: self.w.add(self.col(j)),
                    n: self.n - j,
                    out: self.out.add(i * self.os + j),
                    ..self
                }
            }
        }
    }

    /// Runs `block::<L, R, V, W>` over the rows of `p`: blocks of `max` rows, then one shorter
    /// block.
    macro_rules! row_blocks {
        ($p:expr, $lanes:ty, $max:literal, [$($r:literal),*], $v:literal, $w:ty) => {{
            let p = $p;
            let mut i = 0;
            while i + $max <= p.m {
                block::<$lanes, $max, $v, $w>(p.from(i, 0));
                i += $max;
            }
            match p.m - i {
                $($r => block::<$lanes, $r, $v, $w>(p.from(i, 0)),)*
                _ => {}
            }
        }};
    }
    pub(super) use row_blocks;

    /// One register of f32 lanes: what a block needs of AVX2's `__m256` and AVX-512's `__m512`.
    /// Each method is one intrinsic, inlined into the kernel that enables its feature.
    pub(super) trait Lanes: Copy {
        const N: usize;
        unsafe fn zero() -> Self;
        unsafe fn load(p: *const f32) -> Self;
        unsafe fn load_weights<W: Load>(p: *const W) -> Self;
        unsafe fn store(self, p: *mut f32);
        unsafe fn splat(x: f32) -> Self;
        /// `a · b + self`, one rounding.
        unsafe fn fma(self, a: Self, b: Self) -> Self;
    }

    impl Lanes for __m256 {
        const N: usize = 8;
        #[inline(always)]
        unsafe fn zero() -> Self {
            unsafe { _mm256_setzero_ps() }
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            unsafe { _mm256_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn load_weights<W: Load>(p: *const W) -> Self {
            unsafe { W::load8(p) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32) {
            unsafe { _mm256_storeu_ps(p, self) }
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> Self {
            unsafe { _mm256_set1_ps(x) }
        }
        #[inline(always)]
        unsafe fn fma(self, a: Self, b: Self) -> Self {
            unsafe { _mm256_fmadd_ps(a, b, self) }
        }
    }

    impl Lanes for __m512 {
        const N: usize = 16;
        #[inline(always)]
        unsafe fn zero() -> Self {
            unsafe { _mm512_setzero_ps() }
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            unsafe { _mm512_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn load_weights<W: Load>(p: *const W) -> Self {
            unsafe { W::load16(p) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32) {
            unsafe { _mm512_storeu_ps(p, self) }
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> Self {
            unsafe { _mm512_set1_ps(x) }
        }
        #[inline(always)]
        unsafe fn fma(self, a: Self, b: Self) -> Self {
            unsafe { _mm512_fmadd_ps(a, b, self) }
        }
    }

    /// `R` rows × `V` vectors of `L::N` outputs: R × V accumulators (at most 12 of AVX2's 16
    /// registers, 24 of AVX-512's 32), V weight vectors and the broadcast input.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)]
    pub(super) unsafe fn block<L: Lanes, const R: usize, const V: usize, W: Load>(p: Raw<W>) {
        unsafe {
            let Raw {
                x,
                xs,
                w,
                ws,
                k,
                out,
                os,
                ..
            } = p;
            // Index loops over the blocks: iterator adapters are not always inlined into a
            // `target_feature` function, and a call per step spills every accumulator.
            let mut acc = [[L::zero(); V]; R];
            for r in 0..R {
                for v in 0..V {
                    acc[r][v] = L::load(out.add(r * os + L::N * v));
                }
            }
            let mut cols = [0; V];
            for v in 0..V {
                cols[v] = p.col(L::N * v);
            }
            for c in 0..k {
                let mut wv = [L::zero(); V];
                for v in 0..V {
                    wv[v] = L::load_weights(w.add(c * ws + cols[v]));
                }
                for r in 0..R {
                    let xb = L::splat(*x.add(r * xs + c));
                    for v in 0..V {
                        acc[r][v] = acc[r][v].fma(xb, wv[v]);
                    }
                }
            }
            for r in 0..R {
                for v in 0..V {
                    acc[r][v].store(out.add(r * os + L::N * v));
                }
            }
        }
    }

    /// The outputs no vector block covers (fewer than 8 columns), one scalar chain each.
    #[inline(always)]
    pub(super) unsafe fn scalar<W: Load>(p: Raw<W>) {
        unsafe {
            for i in 0..p.m {
                for j in 0..p.n {
                    let o = p.out.add(i * p.os + j);
                    let mut acc = *o;
                    for c in 0..p.k {
                        acc = (*p.x.add(i * p.xs + c))
                            .mul_add((*p.w.add(c * p.ws + p.col(j))).to_f32(), acc);
                    }
                    *o = acc;
                }
            }
        }
    }

    /// # Safety
    /// AVX2, FMA and F16C available; every value of `p` readable (x, w) or writable (out).
    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) unsafe fn xw<W: Load>(p: Raw<W>) {
        unsafe {
            // A panel of 16 outputs' weights stays in L1/L2 while every block of rows passes it.
            let mut j = 0;
            while j + 16 <= p.n {
                row_blocks!(p.from(0, j), __m256, 6, [5, 4, 3, 2, 1], 2, W);
                j += 16;
            }
            if j + 8 <= p.n {
                row_blocks!(p.from(0, j), __m256, 6, [5, 4, 3, 2, 1], 1, W);
                j += 8;
            }
            scalar(p.from(0, j));
        }
    }
}

/// The same products with AVX-512: 16 lanes and 32 registers, so blocks of 8 rows × 3 vectors
/// (48 outputs, 24 accumulators). Columns past the last vector of 16 go to the AVX2 kernel,
/// which computes them in the same order.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::avx2::{Load, Raw, block, row_blocks};
    use std::arch::x86_64::*;

    /// # Safety
    /// AVX-512F, AVX2, FMA and F16C available; every value of `p` readable or writable.
    #[target_feature(enable = "avx512f,avx2,fma,f16c")]
    pub(super) unsafe fn xw<W: Load>(p: Raw<W>) {
        unsafe {
            let mut j = 0;
            while j + 48 <= p.n {
                row_blocks!(p.from(0, j), __m512, 8, [7, 6, 5, 4, 3, 2, 1], 3, W);
                j += 48;
            }
            match (p.n - j) / 16 {
                2 => row_blocks!(p.from(0, j), __m512, 8, [7, 6, 5, 4, 3, 2, 1], 2, W),
                1 => row_blocks!(p.from(0, j), __m512, 8, [7, 6, 5, 4, 3, 2, 1], 1, W),
                _ => {}
            }
            j += (p.n - j) / 16 * 16;
            super::avx2::xw(p.from(0, j));
        }
    }
}

/// GELU in place, as BERT defines it (`hidden_act: gelu`): `x · Φ(x) = x/2 · (1 + erf(x/√2))`
/// with erf, not the tanh approximation, vectorised (8 lanes with AVX2/FMA).
pub fn gelu(values: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if direct_available() {
        // SAFETY: the CPU has AVX2 and FMA.
        unsafe { gelu_avx2(values) };
        return;
    }
    gelu_portable(values);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn gelu_avx2(values: &mut [f32]) {
    gelu_portable(values)
}

#[inline(always)]
fn gelu_portable(values: &mut [f32]) {
    for v in values.iter_mut() {
        *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// erf in single precision, branch-free (so it vectorises): a rational minimax fit on
/// [-4, 4], outside which erf is ±1 in f32 (the fit of Eigen's and XLA's f32 erf). Its largest
/// error is 4.4e-7 (checked against f64 erf below); `libm::erff` is more exact by a few ulp and
/// made GELU 40 % of a text's time.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = -2.726_142_3e-10_f32;
    p = p * x2 + 2.770_681_4e-8;
    p = p * x2 - 2.101_024e-6;
    p = p * x2 - 5.692_506_4e-5;
    p = p * x2 - 7.349_906e-4;
    p = p * x2 - 2.954_600_1e-3;
    p = p * x2 - 1.609_603_3e-2;
    let mut q = -1.456_607_2e-5_f32;
    q = q * x2 - 2.133_740_6e-4;
    q = q * x2 - 1.682_827e-3;
    q = q * x2 - 7.373_329e-3;
    q = q * x2 - 1.426_473_9e-2;
    x * p / q
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        /// Set by a test to run the portable paths (`matrixmultiply`, F32 weights) on this
        /// thread, as on a CPU without AVX2/FMA/F16C.
        pub(crate) static PORTABLE: Cell<bool> = const { Cell::new(false) };
        /// Set by a test to run the AVX2 kernel where the CPU has AVX-512.
        pub(crate) static NO_AVX512: Cell<bool> = const { Cell::new(false) };
    }

    #[test]
    fn erf_is_within_5e7_of_the_f64_reference_everywhere() {
        let mut worst = 0f64;
        for i in -600_000..=600_000 {
            let x = i as f64 * 1e-5;
            let got = f64::from(erf(x as f32));
            worst = worst.max((got - libm::erf(x)).abs());
        }
        assert!(worst < 5e-7, "{worst}");
        assert_eq!(erf(0.0), 0.0);
        assert_eq!(erf(10.0), erf(4.0));
        let mut v = [-3.0, -1.0, 0.0, 0.5, 2.0, 6.0, 1e-3, -1e-3, 0.25];
        gelu(&mut v);
        for (g, x) in v
            .iter()
            .zip([-3.0f64, -1.0, 0.0, 0.5, 2.0, 6.0, 1e-3, -1e-3, 0.25])
        {
            let want = 0.5 * x * (1.0 + libm::erf(x / std::f64::consts::SQRT_2));
            assert!(
                (f64::from(*g) - want).abs() < 2e-6,
                "gelu({x}) = {g}, want {want}"
            );
        }
    }

    /// F16 bits of a value that F16 represents exactly (the test weights are multiples of 0.25),
    /// found by search over the 65,536 halves.
    fn f32_to_f16_exact(v: f32) -> u16 {
        (0..=u16::MAX)
            .find(|&h| super::super::safetensors::f16_to_f32(h) == v)
            .unwrap_or_else(|| panic!("{v} is not exact in F16"))
    }

    #[test]
    fn direct_product_is_the_fused_chain_bit_for_bit_for_every_remainder() {
        if !direct_available() {
            eprintln!("skipped: this CPU has no AVX2/FMA, the direct kernel is never used");
            return;
        }
        // Row counts and output widths around every block (6 and 8 rows; 8, 16, 48 columns)
        // and both weight types, with strides; with the AVX-512 kernel (where the CPU has it)
        // and without. Every output must be exactly `out + x0·w0 + x1·w1 + …` as fused
        // multiply-adds in input order: the same bits from either kernel and from the scalar
        // edge loop, so the test compares with `==`.
        let shapes = [
            (1, 1, 1),
            (5, 7, 13),
            (8, 48, 8),
            (9, 16, 33),
            (7, 24, 40),
            (17, 113, 50),
            (13, 64, 3),
            (6, 200, 64),
            (2, 0, 5),
            (0, 9, 5),
            (3, 5, 0),
        ];
        for (m, n, k) in shapes
            .into_iter()
            .flat_map(|s| [(s, false), (s, true)])
            .map(|(s, avx2_only)| {
                NO_AVX512.set(avx2_only);
                s
            })
        {
            let (xs, ws, os) = (k + 3, n + 1, n + 2);
            let x: Vec<f32> = (0..m * xs)
                .map(|i| ((i * 37) % 11) as f32 * 0.1 - 0.5)
                .collect();
            let w: Vec<f32> = (0..k * ws)
                .map(|i| ((i * 53) % 7) as f32 * 0.25 - 0.75)
                .collect();
            let before: Vec<f32> = (0..m * os).map(|i| (i % 13) as f32 * 0.3).collect();
            let xr = Rows {
                data: &x,
                rows: m,
                cols: k,
                stride: xs,
            };
            fn row_major<T>(data: &[T], k: usize, n: usize, ws: usize) -> Panels<'_, T> {
                Rows {
                    data,
                    rows: k,
                    cols: n,
                    stride: ws,
                }
                .into()
            }
            let mut out = before.clone();
            xw(xr, row_major(&w, k, n, ws), &mut out, os);
            // The same weights as F16 bits (the values are exact in F16).
            let halves: Vec<u16> = w.iter().map(|&v| f32_to_f16_exact(v)).collect();
            let mut out16 = before.clone();
            xw(xr, row_major(&halves, k, n, ws), &mut out16, os);
            assert_eq!(out16, out, "{m}x{n}x{k}: F16 weights");
            // Packed in panels, as the encoder keeps its weights: from wᵀ (n × k), as stored.
            let wt: Vec<f32> = (0..n * k)
                .map(|i| w[(i % k.max(1)) * ws + i / k.max(1)])
                .collect();
            let mut out_packed = before.clone();
            xw(xr, packed(&pack(&wt, n, k), k, n), &mut out_packed, os);
            assert_eq!(out_packed, out, "{m}x{n}x{k}: packed");
            let halves_t: Vec<u16> = wt.iter().map(|&v| f32_to_f16_exact(v)).collect();
            let mut out_packed16 = before.clone();
            xw(
                xr,
                packed(&pack(&halves_t, n, k), k, n),
                &mut out_packed16,
                os,
            );
            assert_eq!(out_packed16, out, "{m}x{n}x{k}: packed F16");
            let mut want = before.clone();
            for i in 0..m {
                for j in 0..n {
                    want[i * os + j] = (0..k).fold(before[i * os + j], |acc, c| {
                        x[i * xs + c].mul_add(w[c * ws + j], acc)
                    });
                }
            }
            assert_eq!(out, want, "{m}x{n}x{k}");
        }
        NO_AVX512.set(false);
    }
}
