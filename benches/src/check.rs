//! The once-per-case result check: strata and each peer must compute the same thing
//! before their times are compared.

use num_complex::Complex;

/// A value the check can compare: its real and imaginary parts as f64.
pub trait Parts: Copy {
    /// (re, im).
    fn parts(self) -> (f64, f64);
}

impl Parts for f64 {
    fn parts(self) -> (f64, f64) {
        (self, 0.0)
    }
}
impl Parts for f32 {
    fn parts(self) -> (f64, f64) {
        (f64::from(self), 0.0)
    }
}
impl<R: Parts> Parts for Complex<R> {
    fn parts(self) -> (f64, f64) {
        (self.re.parts().0, self.im.parts().0)
    }
}

/// Checks that `got` matches `want` element by element, relative to the largest
/// magnitude of `want` (so that cancellation near zero does not fail a correct result).
pub fn close<T: Parts>(who: &str, got: &[T], want: &[T], rel_tol: f64) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{who}: {} elements, the reference has {}", got.len(), want.len()));
    }
    let scale = want.iter().map(|w| magnitude(w.parts())).fold(0.0f64, f64::max).max(f64::MIN_POSITIVE);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let (g, w) = (g.parts(), w.parts());
        let err = magnitude((g.0 - w.0, g.1 - w.1));
        // NaN anywhere fails: it is not within any tolerance.
        if err.is_nan() || err > rel_tol * scale {
            return Err(format!(
                "{who}: element {i} is {g:?}, the reference has {w:?} (tolerance {rel_tol} × {scale})"
            ));
        }
    }
    Ok(())
}

fn magnitude((re, im): (f64, f64)) -> f64 {
    re.hypot(im)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_accepts_rounding_and_rejects_real_differences() {
        let want = [1.0f64, -2.0, 1e-20];
        assert!(close("x", &[1.0 + 1e-14, -2.0, 0.0], &want, 1e-12).is_ok());
        assert!(close("x", &[1.0, -2.1, 0.0], &want, 1e-12).is_err());
        assert!(close("x", &[1.0, f64::NAN, 0.0], &want, 1e-12).is_err());
        assert!(close("x", &[1.0], &want, 1e-12).is_err());
        let z = [Complex::new(1.0f64, 1.0)];
        assert!(close("z", &[Complex::new(1.0, 1.1)], &z, 1e-3).is_err());
    }
}
