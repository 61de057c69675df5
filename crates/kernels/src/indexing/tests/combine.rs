//! The scatter combiners' edge cases, hand-computed from SPEC §3.

use strata_tensor::{c32, c64};

use crate::indexing::combine::Combine;

#[test]
fn float_max_min_propagate_nan_and_order_signed_zeros() {
    assert!(Combine::max(f32::NAN, 1.0).is_nan());
    assert!(Combine::max(1.0f64, f64::NAN).is_nan());
    assert!(Combine::min(f64::NAN, -1.0).is_nan());
    assert!(Combine::min(2.0f32, f32::NAN).is_nan());
    assert!(Combine::max(-0.0f32, 0.0).is_sign_positive());
    assert!(Combine::max(0.0f64, -0.0).is_sign_positive());
    assert!(Combine::min(0.0f32, -0.0).is_sign_negative());
    assert!(Combine::min(-0.0f64, 0.0).is_sign_negative());
    assert_eq!(Combine::max(-3.0f32, 2.0), 2.0);
    assert_eq!(Combine::min(-3.0f64, 2.0), -3.0);
}

#[test]
fn integers_wrap_and_bools_are_logical() {
    assert_eq!(Combine::add(i32::MAX, 1), i32::MIN);
    assert_eq!(Combine::mul(i64::MAX, 2), -2);
    assert_eq!(Combine::max(-5i32, 3), 3);
    assert_eq!(Combine::min(-5i64, 3), -5);
    for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
        assert_eq!(Combine::add(a, b), a || b);
        assert_eq!(Combine::mul(a, b), a && b);
        assert_eq!(Combine::max(a, b), a || b);
        assert_eq!(Combine::min(a, b), a && b);
    }
}

#[test]
fn complex_order_is_real_then_imaginary() {
    let (a, b) = (c64::new(1.0, 5.0), c64::new(2.0, -1.0));
    assert_eq!(Combine::max(a, b), b);
    assert_eq!(Combine::min(a, b), a);
    let (c, d) = (c32::new(1.0, 2.0), c32::new(1.0, 3.0));
    assert_eq!(Combine::max(c, d), d);
    assert_eq!(Combine::min(d, c), c);
    assert!(Combine::max(c64::new(f64::NAN, 0.0), a).re.is_nan());
    assert!(Combine::min(a, c64::new(0.0, f64::NAN)).im.is_nan());
    assert_eq!(Combine::mul(c32::new(1.0, 2.0), c32::new(3.0, 4.0)), c32::new(-5.0, 10.0));
}
