//! The encoder's two hot loops in forms a CPU runs fast: products of a few token rows with a
//! weight matrix, and GELU.
//!
//! `matrixmultiply` packs both operands into its own layout on every call. For one short text
//! (a query: ~10 token rows) that means copying every weight matrix of the model (42 MB) per
//! text, which was two thirds of a query's time. [`xwt`] multiplies the rows directly against
//! the weights as stored (row-major `[outputs, inputs]`, so each output is a dot product of two
//! contiguous rows), in register blocks of 4 rows × 3 outputs with AVX2/FMA (4 × 6 with
//! AVX-512), reading F16 weights as they are (F16C widens them in the load). Where these run
//! they run for every product, whatever the number of rows; `matrixmultiply` serves the other
//! CPUs (no AVX2/FMA/F16C, or not x86-64).

/// Whether [`xwt`] has its fast path on this CPU (AVX2, FMA, and F16C for F16 weights).
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

/// `out[i][j] += x_i · w_j` for every row `i` of `x` and row `j` of `w` (so `out += x · wᵀ`),
/// `out` row-major with row stride `out_stride`. Needs [`direct_available`].
pub fn xwt<W: Weight + avx2::Load>(x: Rows, w: Rows<W>, out: &mut [f32], out_stride: usize) {
    assert!(
        x.cols == w.cols && x.fits() && w.fits(),
        "xwt: operand shapes"
    );
    assert!(
        x.rows == 0 || w.rows == 0 || (x.rows - 1) * out_stride + w.rows <= out.len(),
        "xwt: output shape"
    );
    assert!(direct_available(), "xwt: needs AVX2, FMA and F16C");
    #[cfg(target_arch = "x86_64")]
    {
        let raw = avx2::Raw {
            x: x.data.as_ptr(),
            xs: x.stride,
            m: x.rows,
            w: w.data.as_ptr(),
            ws: w.stride,
            n: w.rows,
            k: x.cols,
            out: out.as_mut_ptr(),
            os: out_stride,
        };
        // SAFETY: the CPU has AVX2, FMA and F16C (asserted) and AVX-512F where that kernel
        // runs; every row read or written lies within its slice (asserted above).
        unsafe {
            if avx512_available() {
                avx512::xwt(raw)
            } else {
                avx2::xwt(raw)
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

    #[inline(always)]
    unsafe fn hsum(v: __m256) -> f32 {
        unsafe {
            let lo = _mm256_castps256_ps128(v);
            let hi = _mm256_extractf128_ps(v, 1);
            let s = _mm_add_ps(lo, hi);
            let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
            let s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
            _mm_cvtss_f32(s)
        }
    }

    /// `R` rows of x against `S` rows of w: R × S accumulators (at most 12 of the 16 AVX
    /// registers, plus S weight vectors and one row vector).
    #[inline(always)]
    unsafe fn block<const R: usize, const S: usize, W: Load>(
        x: *const f32,
        xs: usize,
        w: *const W,
        ws: usize,
        k: usize,
        out: *mut f32,
        os: usize,
    ) {
        unsafe {
            let mut acc = [[_mm256_setzero_ps(); S]; R];
            let kb = k & !7;
            let mut c = 0;
            while c < kb {
                let mut wv = [_mm256_setzero_ps(); S];
                for (s, v) in wv.iter_mut().enumerate() {
                    *v = W::load8(w.add(s * ws + c));
                }
                for (r, row) in acc.iter_mut().enumerate() {
                    let xv = _mm256_loadu_ps(x.add(r * xs + c));
                    for (a, v) in row.iter_mut().zip(&wv) {
                        *a = _mm256_fmadd_ps(xv, *v, *a);
                    }
                }
                c += 8;
            }
            for (r, row) in acc.iter().enumerate() {
                for (s, a) in row.iter().enumerate() {
                    let mut sum = hsum(*a);
                    for t in kb..k {
                        sum += *x.add(r * xs + t) * (*w.add(s * ws + t)).to_f32();
                    }
                    *out.add(r * os + s) += sum;
                }
            }
        }
    }

    /// The operands as raw parts: `m` rows of x (stride `xs`), `n` rows of w (stride `ws`),
    /// `k` values each; `out` with row stride `os`.
    #[derive(Clone, Copy)]
    pub(super) struct Raw<W> {
        pub x: *const f32,
        pub xs: usize,
        pub m: usize,
        pub w: *const W,
        pub ws: usize,
        pub n: usize,
        pub k: usize,
        pub out: *mut f32,
        pub os: usize,
    }

    #[inline(always)]
    unsafe fn rows<const S: usize, W: Load>(p: Raw<W>) {
        unsafe {
            let Raw {
                x,
                xs,
                m,
                w,
                ws,
                k,
                out,
                os,
                ..
            } = p;
            let mut i = 0;
            while i + 4 <= m {
                block::<4, S, W>(x.add(i * xs), xs, w, ws, k, out.add(i * os), os);
                i += 4;
            }
            let (x, o) = (x.add(i * xs), out.add(i * os));
            match m - i {
                3 => block::<3, S, W>(x, xs, w, ws, k, o, os),
                2 => block::<2, S, W>(x, xs, w, ws, k, o, os),
                1 => block::<1, S, W>(x, xs, w, ws, k, o, os),
                _ => {}
            }
        }
    }

    /// # Safety
    /// AVX2, FMA and F16C available; every row of `p` readable (x, w) or writable (out).
    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) unsafe fn xwt<W: Load>(p: Raw<W>) {
        unsafe {
            // Three weight rows at a time stay in L1 while every token row passes them.
            let mut j = 0;
            let at = |j: usize| Raw {
                w: p.w.add(j * p.ws),
                out: p.out.add(j),
                ..p
            };
            while j + 3 <= p.n {
                rows::<3, W>(at(j));
                j += 3;
            }
            match p.n - j {
                2 => rows::<2, W>(at(j)),
                1 => rows::<1, W>(at(j)),
                _ => {}
            }
        }
    }
}

/// The same products with AVX-512: 16 lanes and 32 registers, so blocks of 4 rows × 6
/// outputs (24 accumulators). Outputs past the last block of 6 go to the AVX2 kernel: which
/// kernel computes an output depends on its column only, never on where a text's rows sit in
/// a stack, so a text gets the same vector in any batch (and from the cache).
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::avx2::{Load, Raw};
    use std::arch::x86_64::*;

    const S: usize = 6;

    #[inline(always)]
    unsafe fn block<const R: usize, W: Load>(p: Raw<W>) {
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
            let mut acc = [[_mm512_setzero_ps(); S]; R];
            let kb = k & !15;
            let mut c = 0;
            while c < kb {
                let mut wv = [_mm512_setzero_ps(); S];
                for (s, v) in wv.iter_mut().enumerate() {
                    *v = W::load16(w.add(s * ws + c));
                }
                for (r, row) in acc.iter_mut().enumerate() {
                    let xv = _mm512_loadu_ps(x.add(r * xs + c));
                    for (a, v) in row.iter_mut().zip(&wv) {
                        *a = _mm512_fmadd_ps(xv, *v, *a);
                    }
                }
                c += 16;
            }
            for (r, row) in acc.iter().enumerate() {
                for (s, a) in row.iter().enumerate() {
                    let mut sum = _mm512_reduce_add_ps(*a);
                    for t in kb..k {
                        sum += *x.add(r * xs + t) * (*w.add(s * ws + t)).to_f32();
                    }
                    *out.add(r * os + s) += sum;
                }
            }
        }
    }

    /// # Safety
    /// AVX-512F, AVX2, FMA and F16C available; every row of `p` readable or writable.
    #[target_feature(enable = "avx512f,avx2,fma,f16c")]
    pub(super) unsafe fn xwt<W: Load>(p: Raw<W>) {
        unsafe {
            let n6 = p.n / S * S;
            let mut j = 0;
            while j < n6 {
                let at = |i: usize| Raw {
                    x: p.x.add(i * p.xs),
                    w: p.w.add(j * p.ws),
                    out: p.out.add(i * p.os + j),
                    ..p
                };
                let mut i = 0;
                while i + 4 <= p.m {
                    block::<4, W>(at(i));
                    i += 4;
                }
                match p.m - i {
                    3 => block::<3, W>(at(i)),
                    2 => block::<2, W>(at(i)),
                    1 => block::<1, W>(at(i)),
                    _ => {}
                }
                j += S;
            }
            super::avx2::xwt(Raw {
                w: p.w.add(n6 * p.ws),
                n: p.n - n6,
                out: p.out.add(n6),
                ..p
            });
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
    fn direct_product_matches_the_naive_one_for_every_remainder() {
        if !direct_available() {
            eprintln!("skipped: this CPU has no AVX2/FMA, the direct kernel is never used");
            return;
        }
        // Row counts and widths around the 4 × 3 and 4 × 6 blocks and the 8- and 16-lane
        // steps, with strides; with the AVX-512 kernel (where the CPU has it) and without.
        let shapes = [
            (1, 1, 1),
            (5, 7, 13),
            (4, 3, 8),
            (10, 32, 33),
            (3, 2, 40),
            (9, 13, 50),
            (8, 12, 64),
        ];
        for (m, n, k) in shapes
            .into_iter()
            .flat_map(|s| [(s, false), (s, true)])
            .map(|(s, avx2_only)| {
                NO_AVX512.set(avx2_only);
                s
            })
        {
            let (xs, ws, os) = (k + 3, k + 1, n + 2);
            let x: Vec<f32> = (0..m * xs)
                .map(|i| ((i * 37) % 11) as f32 * 0.1 - 0.5)
                .collect();
            let w: Vec<f32> = (0..n * ws)
                .map(|i| ((i * 53) % 7) as f32 * 0.25 - 0.75)
                .collect();
            let mut out: Vec<f32> = (0..m * os).map(|i| i as f32).collect();
            let before = out.clone();
            let xr = Rows {
                data: &x,
                rows: m,
                cols: k,
                stride: xs,
            };
            xwt(
                xr,
                Rows {
                    data: &w,
                    rows: n,
                    cols: k,
                    stride: ws,
                },
                &mut out,
                os,
            );
            // The same weights as F16 bits (the values are exact in F16).
            let halves: Vec<u16> = w.iter().map(|&v| f32_to_f16_exact(v)).collect();
            let mut out16 = before.clone();
            xwt(
                xr,
                Rows {
                    data: &halves,
                    rows: n,
                    cols: k,
                    stride: ws,
                },
                &mut out16,
                os,
            );
            assert_eq!(out16, out);
            for i in 0..m {
                for j in 0..os {
                    let want = if j < n {
                        before[i * os + j]
                            + (0..k).map(|t| x[i * xs + t] * w[j * ws + t]).sum::<f32>()
                    } else {
                        before[i * os + j]
                    };
                    assert!(
                        (out[i * os + j] - want).abs() < 1e-4,
                        "{m}x{n}x{k} [{i}][{j}]"
                    );
                }
            }
        }
    }
}
