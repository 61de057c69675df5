//! `Display` prints what numpy's `str()` prints, checked against `data/display.txt`
//! (numpy's own output for each case).

mod fixtures;

use strata_tensor::{Tensor, TensorRead};

#[test]
fn display_matches_numpy_str() {
    let records = fixtures::records(include_str!("data/display.txt"));
    assert!(records.len() >= 25, "fixture file lost its cases");
    let mut failures = Vec::new();
    for r in &records {
        let t = r.tensor();
        let got = t.to_string();
        if got != r.expect {
            failures.push(format!("case {}:\n--- numpy\n{}\n--- strata\n{got}", r.get("case"), r.expect));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), records.len(), failures.join("\n"));
}

#[test]
fn views_print_their_own_elements() {
    // A transposed, reversed view prints as the copy it stands for.
    let t = Tensor::from_vec((0..6).map(f64::from).collect::<Vec<_>>(), &[2, 3]).unwrap();
    let v = t.view().transpose(&[1, 0]).unwrap().reverse(&[0]).unwrap();
    assert_eq!(v.to_string(), "[[2. 5.]\n [1. 4.]\n [0. 3.]]");
    assert_eq!(v.to_string(), v.to_tensor().to_string());
    let read: TensorRead<'_> = v.into();
    assert_eq!(read.to_string(), "[[2. 5.]\n [1. 4.]\n [0. 3.]]");
    let typed = t.as_typed::<f64>().unwrap();
    assert_eq!(typed.to_string(), t.to_string());
}
