"""Writes the numpy-made fixtures of strata-tensor's tests (run from this folder with
numpy 2.x: `python make_fixtures.py`). The outputs are committed; CI never runs Python.

- display.txt: numpy's str() of small arrays, for the Display tests;
- npy/*.npy, npy/*.npz: arrays of every dtype as numpy writes them (C and Fortran order,
  both byte orders, stored and compressed archives), and manifest.txt with their values.
"""
import os

import numpy as np


def value_text(x, kind):
    if kind == "c":
        return f"{float(x.real)!r},{float(x.imag)!r}"
    if kind == "b":
        return "1" if x else "0"
    if kind == "f":
        return repr(float(x))
    return str(int(x))


def flat_text(a):
    kind = a.dtype.kind
    return " ".join(value_text(x, kind) for x in a.reshape(-1))


def display_cases():
    r = np.arange(6, dtype=np.float64).reshape(2, 3)
    yield "float_matrix", np.array([[0.5, 1.0, -2.25], [3.0, 4.0, 5.0]])
    yield "integral_floats", r
    yield "thirds", np.array([1 / 3, 2 / 3, 1.0, 10.5])
    yield "nan_inf", np.array([1.5, np.nan, -np.inf, np.inf, -0.0])
    yield "only_nan", np.array([np.nan, np.inf])
    yield "small_scientific", np.array([1e-5, 1.0, 2.5])
    yield "large_scientific", np.array([1.5e10, -2.0, 3.25e-3])
    yield "wide_ratio", np.array([0.001, 2.0, 3000.0])
    yield "scientific_nan", np.array([1e-7, np.nan, 1.0])
    yield "float32", np.array([0.1, 0.2, 1.0 / 3.0, 7.0], dtype=np.float32)
    yield "int32", np.array([[1, -20, 300], [4, 5, -6]], dtype=np.int32)
    yield "int64_big", np.array([2**40, -3, 7], dtype=np.int64)
    yield "bool", np.array([[True, False], [False, True]])
    yield "complex128", np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j])
    yield "complex64", np.array([[1j, 2], [0.5 - 1.5j, -3]], dtype=np.complex64)
    yield "complex_nan", np.array([1 + 1j, complex(np.nan, 2.0)])
    yield "rank3", np.arange(12, dtype=np.int64).reshape(2, 3, 2)
    yield "rank4", np.arange(16, dtype=np.int32).reshape(2, 2, 2, 2)
    yield "wrapping_row", np.arange(30, dtype=np.float64)
    yield "wrapping_matrix", (np.arange(40, dtype=np.float64) / 7).reshape(2, 20)
    yield "summarised_vector", np.arange(2000, dtype=np.int64)
    yield "summarised_matrix", np.arange(1600, dtype=np.float64).reshape(40, 40) / 4
    yield "summarised_rank3", np.arange(2 * 30 * 30, dtype=np.int32).reshape(2, 30, 30)
    yield "scalar_float", np.array(2.5)
    yield "scalar_integral", np.array(3.0)
    yield "scalar_small", np.array(1e-5)
    yield "scalar_int", np.array(-7, dtype=np.int32)
    yield "scalar_complex", np.array(1 + 2j)
    yield "empty", np.zeros((2, 0))
    yield "one_element", np.array([[4.0]])


def write_display():
    with open("display.txt", "w") as out:
        for name, a in display_cases():
            out.write(f"case {name}\n")
            out.write(f"dtype {a.dtype.name}\n")
            out.write("shape " + " ".join(str(d) for d in a.shape) + "\n")
            out.write("data " + flat_text(a) + "\n")
            out.write("expect\n" + str(a) + "\nend\n")


def npy_arrays():
    base = np.arange(24).reshape(2, 3, 4)
    yield "f32", (base / 8 - 1).astype(np.float32)
    yield "f64", base / 3 - 2.5
    yield "i32", (base - 12).astype(np.int32)
    yield "i64", (base * 10**10 - 3).astype(np.int64)
    yield "bool", base % 3 == 0
    yield "c32", (base + 1j * (base[::-1] - 5)).astype(np.complex64)
    yield "c64", base / 4 - 1j * base
    yield "scalar_f64", np.array(-1.25)
    yield "empty_f32", np.zeros((3, 0), dtype=np.float32)
    yield "vector_i64", np.arange(-3, 4, dtype=np.int64)


def write_npy():
    os.makedirs("npy", exist_ok=True)
    manifest = []
    for name, a in npy_arrays():
        np.save(f"npy/{name}.npy", a)
        manifest.append((f"{name}.npy", "", a))
        if a.ndim >= 2:
            np.save(f"npy/{name}_fortran.npy", np.asfortranarray(a))
            manifest.append((f"{name}_fortran.npy", "", a))
        if a.dtype.itemsize > 1 and a.dtype.kind != "b":
            big = a.astype(a.dtype.newbyteorder(">"))
            np.save(f"npy/{name}_big_endian.npy", big)
            manifest.append((f"{name}_big_endian.npy", "", a))
    arrays = dict(npy_arrays())
    np.savez("npy/archive.npz", weights=arrays["f64"], mask=arrays["bool"], counts=arrays["i32"])
    for key in ("weights", "mask", "counts"):
        src = {"weights": "f64", "mask": "bool", "counts": "i32"}[key]
        manifest.append(("archive.npz", key, arrays[src]))
    np.savez_compressed("npy/compressed.npz", c=arrays["c64"], f=np.asfortranarray(arrays["f32"]))
    manifest.append(("compressed.npz", "c", arrays["c64"]))
    manifest.append(("compressed.npz", "f", arrays["f32"]))
    # Files strata must refuse with a typed error.
    np.save("npy/unsupported_u16.npy", np.arange(4, dtype=np.uint16))
    np.save("npy/unsupported_f16.npy", np.arange(4, dtype=np.float16))
    np.save("npy/unsupported_record.npy", np.zeros(2, dtype=[("a", "<i4"), ("b", "<f8")]))
    with open("npy/manifest.txt", "w") as out:
        for file, key, a in manifest:
            out.write(f"file {file}\nkey {key}\ndtype {a.dtype.name}\n")
            out.write("shape " + " ".join(str(d) for d in a.shape) + "\n")
            out.write("data " + flat_text(np.ascontiguousarray(a)) + "\nend\n")


if __name__ == "__main__":
    write_display()
    write_npy()
