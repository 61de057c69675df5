//! Shared pieces of the flat-array cases (streaming, in-cache, analytic): a real element
//! type written once for f32 and f64, inputs, and the plain-loop references, run on a
//! Rayon pool of the case's thread count (sequentially when the array is small enough
//! that forking costs more than it saves).

use ndarray::Array1;
use rayon::prelude::*;
use strata_tensor::{Scalar, TypedTensor};

use crate::check::Parts;
use crate::random_f64;

/// Elements per task of the parallel loops.
pub const CHUNK: usize = 1 << 16;
/// Arrays up to this many elements are looped over on one thread.
pub const SEQUENTIAL_MAX: usize = 1 << 18;

/// f32 or f64, with the operations the cases use.
pub trait Real:
    Scalar + Parts + Copy + Send + Sync + PartialEq + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> + 'static
{
    /// Tolerance of a result check against a loop that may round differently.
    const TOL: f64;
    /// From f64 (rounded).
    fn of(x: f64) -> Self;
    /// libm's value of `f`.
    fn apply(self, f: Func) -> Self;
}

/// An analytic function the cases measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    /// e^x.
    Exp,
    /// ln x.
    Log,
    /// sin x.
    Sin,
    /// tanh x.
    Tanh,
}

macro_rules! real {
    ($t:ty, $tol:expr) => {
        impl Real for $t {
            const TOL: f64 = $tol;
            fn of(x: f64) -> Self {
                x as $t
            }
            fn apply(self, f: Func) -> Self {
                match f {
                    Func::Exp => self.exp(),
                    Func::Log => self.ln(),
                    Func::Sin => self.sin(),
                    Func::Tanh => self.tanh(),
                }
            }
        }
    };
}
real!(f64, 1e-14);
real!(f32, 1e-6);

/// `len` pseudo-random values of `f(x)` for x in [-1, 1).
pub fn values<T: Real>(len: usize, seed: u64, f: impl Fn(f64) -> f64) -> Vec<T> {
    random_f64(len, seed).into_iter().map(|x| T::of(f(x))).collect()
}

/// An owned strata tensor, its ndarray twin and the plain data.
pub struct Operand<T: Real> {
    /// strata's tensor.
    pub tensor: TypedTensor<T>,
    /// ndarray's array.
    pub nd: Array1<T>,
}

impl<T: Real> Operand<T> {
    /// From values.
    pub fn new(data: Vec<T>) -> Result<Self, String> {
        let len = data.len();
        let nd = Array1::from_vec(data.clone());
        let tensor = TypedTensor::from_vec(data, &[len]).map_err(|e| e.to_string())?;
        Ok(Operand { tensor, nd })
    }

    /// The elements.
    pub fn data(&self) -> &[T] {
        self.tensor.data()
    }
}

/// A Rayon pool of `threads` workers for the loop references.
pub fn pool(threads: usize) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| format!("rayon pool: {e}"))
}

/// `c[i] = f(a[i], b[i])`, the plain loop.
pub fn loop2<T: Real>(pool: &rayon::ThreadPool, a: &[T], b: &[T], c: &mut [T], f: impl Fn(T, T) -> T + Sync) {
    let body = |c: &mut [T], a: &[T], b: &[T]| {
        for ((c, a), b) in c.iter_mut().zip(a).zip(b) {
            *c = f(*a, *b);
        }
    };
    if c.len() <= SEQUENTIAL_MAX || pool.current_num_threads() == 1 {
        body(c, a, b);
    } else {
        pool.install(|| {
            c.par_chunks_mut(CHUNK)
                .zip(a.par_chunks(CHUNK))
                .zip(b.par_chunks(CHUNK))
                .for_each(|((c, a), b)| body(c, a, b))
        });
    }
}

/// `c[i] = f(a[i])`, the plain loop.
pub fn loop1<T: Real>(pool: &rayon::ThreadPool, a: &[T], c: &mut [T], f: impl Fn(T) -> T + Sync) {
    let body = |c: &mut [T], a: &[T]| {
        for (c, a) in c.iter_mut().zip(a) {
            *c = f(*a);
        }
    };
    if c.len() <= SEQUENTIAL_MAX || pool.current_num_threads() == 1 {
        body(c, a);
    } else {
        pool.install(|| c.par_chunks_mut(CHUNK).zip(a.par_chunks(CHUNK)).for_each(|(c, a)| body(c, a)));
    }
}

/// The sum with eight independent accumulators per chunk (so the adds pipeline), chunks
/// spread over the pool; in f64 whatever the element type.
pub fn loop_sum<T: Real>(pool: &rayon::ThreadPool, a: &[T]) -> f64 {
    let chunk_sum = |c: &[T]| {
        let mut acc = [0.0f64; 8];
        let mut lanes = c.chunks_exact(8);
        for l in &mut lanes {
            for (s, x) in acc.iter_mut().zip(l) {
                *s += x.parts().0;
            }
        }
        acc.iter().sum::<f64>() + lanes.remainder().iter().map(|x| x.parts().0).sum::<f64>()
    };
    if a.len() <= SEQUENTIAL_MAX || pool.current_num_threads() == 1 {
        chunk_sum(a)
    } else {
        pool.install(|| a.par_chunks(CHUNK).map(chunk_sum).sum())
    }
}

/// A human size: 1k, 64k, 8m (powers of two).
pub fn size_name(len: usize) -> String {
    if len >= 1 << 20 && len.is_multiple_of(1 << 20) {
        format!("{}m", len >> 20)
    } else if len >= 1 << 10 && len.is_multiple_of(1 << 10) {
        format!("{}k", len >> 10)
    } else {
        len.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_compute_what_they_say_at_any_size() {
        let p = pool(2).unwrap();
        for len in [0, 7, SEQUENTIAL_MAX + 12_345] {
            let a: Vec<f64> = values(len, 1, |x| x);
            let b: Vec<f64> = values(len, 2, |x| x);
            let mut c = vec![0.0; len];
            loop2(&p, &a, &b, &mut c, |x, y| x + y);
            assert!(c.iter().zip(&a).zip(&b).all(|((c, a), b)| *c == a + b));
            loop1(&p, &a, &mut c, |x| x.apply(Func::Exp));
            assert!(c.iter().zip(&a).all(|(c, a)| *c == a.exp()));
            let want: f64 = a.iter().sum();
            assert!((loop_sum(&p, &a) - want).abs() <= 1e-9 * (len as f64 + 1.0));
        }
        assert_eq!(size_name(1 << 10), "1k");
        assert_eq!(size_name(64 << 20), "64m");
        assert_eq!(size_name(1000), "1000");
    }
}
