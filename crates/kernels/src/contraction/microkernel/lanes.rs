//! The vector operations the register tiles need, for one real type on one instruction
//! set: AVX-512F, AVX2 + FMA, and a portable fallback of two or four lanes.
//!
//! A `Lanes` value is a zero-sized proof that the running CPU has the instruction set: the
//! x86 ones are only obtained from [`detect_avx512`] / [`detect_avx2`], so every intrinsic
//! call below runs on a CPU that has it. The tiles call these methods from functions
//! compiled with the matching `target_feature`, so each one inlines to one instruction.
//!
//! Loads and stores take raw pointers: the driver proves every address a job touches
//! in bounds once per job (see `Bounds` in the driver), so the per-element loop carries no
//! checks. A partial vector (the last one of a row shorter than a multiple of the lane
//! count) uses a masked load or store that touches only its first `n` lanes.

/// Real element types of the tiles (the parts of complex elements too).
pub trait Real: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// One.
    const ONE: Self;
    /// `-x`.
    fn neg(self) -> Self;
}

impl Real for f32 {
    const ONE: Self = 1.0;
    #[inline(always)]
    fn neg(self) -> Self {
        -self
    }
}

impl Real for f64 {
    const ONE: Self = 1.0;
    #[inline(always)]
    fn neg(self) -> Self {
        -self
    }
}

/// One SIMD instruction set for real type `R`.
pub trait Lanes: Copy + Send + Sync {
    /// The element type.
    type R: Real;
    /// A register of [`Lanes::L`] elements.
    type V: Copy;
    /// Which lanes a partial load or store touches.
    type M: Copy;
    /// Elements per register (even, so a complex element never straddles two).
    const L: usize;
    /// Accumulator registers a tile may use for real elements; complex tiles need two per
    /// output register and get half as many output registers.
    const ACCUMULATORS: usize;

    /// All lanes zero.
    fn zero(self) -> Self::V;
    /// All lanes `x`.
    fn splat(self, x: Self::R) -> Self::V;
    /// Lanes alternating `even, odd, even, odd, ...` (complex coefficients).
    fn pair(self, even: Self::R, odd: Self::R) -> Self::V;
    /// The mask of the first `n <= L` lanes.
    fn first(self, n: usize) -> Self::M;
    /// `L` elements from `p`.
    ///
    /// # Safety
    /// `p .. p + L` must be readable.
    unsafe fn load(self, p: *const Self::R) -> Self::V;
    /// The lanes of `m` from `p`, zero elsewhere.
    ///
    /// # Safety
    /// The masked lanes' addresses must be readable.
    unsafe fn load_part(self, p: *const Self::R, m: Self::M) -> Self::V;
    /// Stores all lanes at `p`.
    ///
    /// # Safety
    /// `p .. p + L` must be writable and not accessed by another thread.
    unsafe fn store(self, p: *mut Self::R, v: Self::V);
    /// Stores the lanes of `m` at `p`.
    ///
    /// # Safety
    /// The masked lanes' addresses must be writable and not accessed by another thread.
    unsafe fn store_part(self, p: *mut Self::R, v: Self::V, m: Self::M);
    /// `a · b + c` (fused where the instruction set has it).
    fn mul_add(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `a · b`.
    fn mul(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a + b`.
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    /// Lanes swapped within each pair: `[a1, a0, a3, a2, ...]`.
    fn swap_pairs(self, a: Self::V) -> Self::V;
}

/// The portable fallback: plain arrays the compiler keeps in SSE registers (x86_64) or
/// whatever the target has. No fused multiply-add: without hardware support it would be a
/// library call per element.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Portable<R>(std::marker::PhantomData<R>);

impl<R> Portable<R> {
    pub(crate) fn new() -> Self {
        Portable(std::marker::PhantomData)
    }
}

macro_rules! portable_lanes {
    ($r:ty, $l:expr) => {
        impl Lanes for Portable<$r> {
            type R = $r;
            type V = [$r; $l];
            type M = usize;
            const L: usize = $l;
            const ACCUMULATORS: usize = 8;

            #[inline(always)]
            fn zero(self) -> Self::V {
                [0.0; $l]
            }
            #[inline(always)]
            fn splat(self, x: $r) -> Self::V {
                [x; $l]
            }
            #[inline(always)]
            fn pair(self, even: $r, odd: $r) -> Self::V {
                std::array::from_fn(|i| if i % 2 == 0 { even } else { odd })
            }
            #[inline(always)]
            fn first(self, n: usize) -> usize {
                n
            }
            #[inline(always)]
            unsafe fn load(self, p: *const $r) -> Self::V {
                // SAFETY: the caller guarantees `L` readable elements at `p`.
                std::array::from_fn(|i| unsafe { *p.add(i) })
            }
            #[inline(always)]
            unsafe fn load_part(self, p: *const $r, n: usize) -> Self::V {
                // SAFETY: the caller guarantees the first `n` elements are readable.
                std::array::from_fn(|i| if i < n { unsafe { *p.add(i) } } else { 0.0 })
            }
            #[inline(always)]
            unsafe fn store(self, p: *mut $r, v: Self::V) {
                for (i, x) in v.into_iter().enumerate() {
                    // SAFETY: the caller guarantees `L` writable elements at `p`.
                    unsafe { *p.add(i) = x };
                }
            }
            #[inline(always)]
            unsafe fn store_part(self, p: *mut $r, v: Self::V, n: usize) {
                for (i, x) in v.into_iter().enumerate().take(n) {
                    // SAFETY: the caller guarantees the first `n` elements are writable.
                    unsafe { *p.add(i) = x };
                }
            }
            #[inline(always)]
            fn mul_add(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V {
                std::array::from_fn(|i| a[i] * b[i] + c[i])
            }
            #[inline(always)]
            fn mul(self, a: Self::V, b: Self::V) -> Self::V {
                std::array::from_fn(|i| a[i] * b[i])
            }
            #[inline(always)]
            fn add(self, a: Self::V, b: Self::V) -> Self::V {
                std::array::from_fn(|i| a[i] + b[i])
            }
            #[inline(always)]
            fn swap_pairs(self, a: Self::V) -> Self::V {
                std::array::from_fn(|i| a[i ^ 1])
            }
        }
    };
}

portable_lanes!(f64, 2);
portable_lanes!(f32, 4);

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{Avx2, Avx512, detect_avx2, detect_avx512};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::Lanes;

    /// Proof that the CPU has AVX-512F (and FMA).
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Avx512<R>(std::marker::PhantomData<R>);

    /// Proof that the CPU has AVX2 and FMA.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Avx2<R>(std::marker::PhantomData<R>);

    /// The AVX-512 lanes, when the CPU has AVX-512F and FMA.
    pub(crate) fn detect_avx512<R>() -> Option<Avx512<R>> {
        (is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("fma"))
            .then_some(Avx512(std::marker::PhantomData))
    }

    /// The AVX2 lanes, when the CPU has AVX2 and FMA.
    pub(crate) fn detect_avx2<R>() -> Option<Avx2<R>> {
        (is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")).then_some(Avx2(std::marker::PhantomData))
    }

    // Every method below calls intrinsics of the instruction set the `self` token proves
    // (it exists only after `detect_*` saw the CPU report it): that is the safety argument
    // of each `unsafe` block, plus the pointer contract of the method where it reads or
    // writes memory.

    impl Lanes for Avx512<f64> {
        type R = f64;
        type V = __m512d;
        type M = __mmask8;
        const L: usize = 8;
        const ACCUMULATORS: usize = 24;

        #[inline(always)]
        fn zero(self) -> __m512d {
            // SAFETY: AVX-512F is present (see above).
            unsafe { _mm512_setzero_pd() }
        }
        #[inline(always)]
        fn splat(self, x: f64) -> __m512d {
            // SAFETY: AVX-512F is present.
            unsafe { _mm512_set1_pd(x) }
        }
        #[inline(always)]
        fn pair(self, even: f64, odd: f64) -> __m512d {
            // SAFETY: AVX-512F is present.
            unsafe { _mm512_setr_pd(even, odd, even, odd, even, odd, even, odd) }
        }
        #[inline(always)]
        fn first(self, n: usize) -> __mmask8 {
            (((1u32 << n) - 1) & 0xff) as __mmask8
        }
        #[inline(always)]
        unsafe fn load(self, p: *const f64) -> __m512d {
            // SAFETY: AVX-512F is present; the caller guarantees 8 readable elements.
            unsafe { _mm512_loadu_pd(p) }
        }
        #[inline(always)]
        unsafe fn load_part(self, p: *const f64, m: __mmask8) -> __m512d {
            // SAFETY: AVX-512F is present; masked-off lanes are not accessed, the caller
            // guarantees the others are readable.
            unsafe { _mm512_maskz_loadu_pd(m, p) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f64, v: __m512d) {
            // SAFETY: AVX-512F is present; the caller guarantees 8 writable elements.
            unsafe { _mm512_storeu_pd(p, v) }
        }
        #[inline(always)]
        unsafe fn store_part(self, p: *mut f64, v: __m512d, m: __mmask8) {
            // SAFETY: AVX-512F is present; only the masked lanes are written.
            unsafe { _mm512_mask_storeu_pd(p, m, v) }
        }
        #[inline(always)]
        fn mul_add(self, a: __m512d, b: __m512d, c: __m512d) -> __m512d {
            // SAFETY: AVX-512F is present.
            unsafe { _mm512_fmadd_pd(a, b, c) }
        }
        #[inline(always)]
        fn mul(self, a: __m512d, b: __m512d) -> __m512d {
            // SAFETY: AVX-512F is present.
            unsafe { _mm512_mul_pd(a, b) }
        }
        #[inline(always)]
        fn add(self, a: __m512d, b: __m512d) -> __m512d {
            // SAFETY: AVX-512F is present.
            unsafe { _mm512_add_pd(a, b) }
        }
        #[inline(always)]
        fn swap_pairs(self, a: __m512d) -> __m512d {
            // SAFETY: AVX-512F is present.
            unsafe { _mm512_permute_pd::<0b0101_0101>(a) }
        }
    }

    impl Lanes for Avx512<f32> {
        type R = f32;
        type V = __m512;
        type M = __mmask16;
        const L: usize = 16;
        const ACCUMULATORS: usize = 24;

        #[inline(always)]
        fn zero(self) -> __m512 {
            // SAFETY: AVX-512F is present.
            unsafe { _mm512_setzero_ps() }
        }
        #[inline(always)]
        fn splat(self, x: f32) -> __m512 {
            // SAFETY: AVX-512F is present.
            unsafe { _mm512_set1_ps(x) }
        }
        #[inline(always)]
        fn pair(self, even: f32, odd: f32) -> __m512 {
            // SAFETY: AVX-512F is present.
            unsafe {
                _mm512_setr_ps(even, odd, even, odd, even, odd, even, odd, even, odd, even, odd, even, odd, even, odd)
            }
        }
        #[inline(always)]
        fn first(self, n: usize) -> __mmask16 {
            (((1u32 << n) - 1) & 0xffff) as __mmask16
        }
        #[inline(always)]
        unsafe fn load(self, p: *const f32) -> __m512 {
            // SAFETY: AVX-512F is present; the caller guarantees 16 readable elements.
            unsafe { _mm512_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn load_part(self, p: *const f32, m: __mmask16) -> __m512 {
            // SAFETY: AVX-512F is present; only the masked lanes are read.
            unsafe { _mm512_maskz_loadu_ps(m, p) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32, v: __m512) {
            // SAFETY: AVX-512F is present; the caller guarantees 16 writable elements.
            unsafe { _mm512_storeu_ps(p, v) }
        }
        #[inline(always)]
        unsafe fn store_part(self, p: *mut f32, v: __m512, m: __mmask16) {
            // SAFETY: AVX-512F is present; only the masked lanes are written.
            unsafe { _mm512_mask_storeu_ps(p, m, v) }
        }
        #[inline(always)]
        fn mul_add(self, a: __m512, b: __m512, c: __m512) -> __m512 {
            // SAFETY: AVX-512F is present.
            unsafe { _mm512_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        fn mul(self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: AVX-512F is present.
            unsafe { _mm512_mul_ps(a, b) }
        }
        #[inline(always)]
        fn add(self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: AVX-512F is present.
            unsafe { _mm512_add_ps(a, b) }
        }
        #[inline(always)]
        fn swap_pairs(self, a: __m512) -> __m512 {
            // SAFETY: AVX-512F is present.
            unsafe { _mm512_permute_ps::<0b1011_0001>(a) }
        }
    }

    impl Lanes for Avx2<f64> {
        type R = f64;
        type V = __m256d;
        type M = __m256i;
        const L: usize = 4;
        const ACCUMULATORS: usize = 12;

        #[inline(always)]
        fn zero(self) -> __m256d {
            // SAFETY: AVX2 is present (see above).
            unsafe { _mm256_setzero_pd() }
        }
        #[inline(always)]
        fn splat(self, x: f64) -> __m256d {
            // SAFETY: AVX2 is present.
            unsafe { _mm256_set1_pd(x) }
        }
        #[inline(always)]
        fn pair(self, even: f64, odd: f64) -> __m256d {
            // SAFETY: AVX2 is present.
            unsafe { _mm256_setr_pd(even, odd, even, odd) }
        }
        #[inline(always)]
        fn first(self, n: usize) -> __m256i {
            // AVX2 masks: lane `i` is accessed when the top bit of element `i` is set.
            let b: [i64; 4] = std::array::from_fn(|i| if i < n { -1 } else { 0 });
            // SAFETY: AVX2 is present.
            unsafe { _mm256_setr_epi64x(b[0], b[1], b[2], b[3]) }
        }
        #[inline(always)]
        unsafe fn load(self, p: *const f64) -> __m256d {
            // SAFETY: AVX2 is present; the caller guarantees 4 readable elements.
            unsafe { _mm256_loadu_pd(p) }
        }
        #[inline(always)]
        unsafe fn load_part(self, p: *const f64, m: __m256i) -> __m256d {
            // SAFETY: AVX2 is present; masked-off lanes are not accessed.
            unsafe { _mm256_maskload_pd(p, m) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f64, v: __m256d) {
            // SAFETY: AVX2 is present; the caller guarantees 4 writable elements.
            unsafe { _mm256_storeu_pd(p, v) }
        }
        #[inline(always)]
        unsafe fn store_part(self, p: *mut f64, v: __m256d, m: __m256i) {
            // SAFETY: AVX2 is present; only the masked lanes are written.
            unsafe { _mm256_maskstore_pd(p, m, v) }
        }
        #[inline(always)]
        fn mul_add(self, a: __m256d, b: __m256d, c: __m256d) -> __m256d {
            // SAFETY: FMA is present.
            unsafe { _mm256_fmadd_pd(a, b, c) }
        }
        #[inline(always)]
        fn mul(self, a: __m256d, b: __m256d) -> __m256d {
            // SAFETY: AVX2 is present.
            unsafe { _mm256_mul_pd(a, b) }
        }
        #[inline(always)]
        fn add(self, a: __m256d, b: __m256d) -> __m256d {
            // SAFETY: AVX2 is present.
            unsafe { _mm256_add_pd(a, b) }
        }
        #[inline(always)]
        fn swap_pairs(self, a: __m256d) -> __m256d {
            // SAFETY: AVX2 is present.
            unsafe { _mm256_permute_pd::<0b0101>(a) }
        }
    }

    impl Lanes for Avx2<f32> {
        type R = f32;
        type V = __m256;
        type M = __m256i;
        const L: usize = 8;
        const ACCUMULATORS: usize = 12;

        #[inline(always)]
        fn zero(self) -> __m256 {
            // SAFETY: AVX2 is present.
            unsafe { _mm256_setzero_ps() }
        }
        #[inline(always)]
        fn splat(self, x: f32) -> __m256 {
            // SAFETY: AVX2 is present.
            unsafe { _mm256_set1_ps(x) }
        }
        #[inline(always)]
        fn pair(self, even: f32, odd: f32) -> __m256 {
            // SAFETY: AVX2 is present.
            unsafe { _mm256_setr_ps(even, odd, even, odd, even, odd, even, odd) }
        }
        #[inline(always)]
        fn first(self, n: usize) -> __m256i {
            let b: [i32; 8] = std::array::from_fn(|i| if i < n { -1 } else { 0 });
            // SAFETY: AVX2 is present.
            unsafe { _mm256_setr_epi32(b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]) }
        }
        #[inline(always)]
        unsafe fn load(self, p: *const f32) -> __m256 {
            // SAFETY: AVX2 is present; the caller guarantees 8 readable elements.
            unsafe { _mm256_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn load_part(self, p: *const f32, m: __m256i) -> __m256 {
            // SAFETY: AVX2 is present; masked-off lanes are not accessed.
            unsafe { _mm256_maskload_ps(p, m) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32, v: __m256) {
            // SAFETY: AVX2 is present; the caller guarantees 8 writable elements.
            unsafe { _mm256_storeu_ps(p, v) }
        }
        #[inline(always)]
        unsafe fn store_part(self, p: *mut f32, v: __m256, m: __m256i) {
            // SAFETY: AVX2 is present; only the masked lanes are written.
            unsafe { _mm256_maskstore_ps(p, m, v) }
        }
        #[inline(always)]
        fn mul_add(self, a: __m256, b: __m256, c: __m256) -> __m256 {
            // SAFETY: FMA is present.
            unsafe { _mm256_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        fn mul(self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: AVX2 is present.
            unsafe { _mm256_mul_ps(a, b) }
        }
        #[inline(always)]
        fn add(self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: AVX2 is present.
            unsafe { _mm256_add_ps(a, b) }
        }
        #[inline(always)]
        fn swap_pairs(self, a: __m256) -> __m256 {
            // SAFETY: AVX2 is present.
            unsafe { _mm256_permute_ps::<0b1011_0001>(a) }
        }
    }
}
