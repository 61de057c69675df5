//! numpy's `.npy` and `.npz` files (feature `npy`): every strata dtype both ways, read
//! through npyz, archives through the zip crate.
//!
//! Reading takes either byte order and both memory orders (a Fortran-order file comes
//! back as the row-major tensor numpy shows); writing produces little-endian C-order
//! files of any view (strides are walked, nothing is copied first). Other dtypes (`uint*`,
//! `float16`, strings, structured and object arrays) are typed `Unsupported` errors; a
//! truncated or malformed file is an `InvalidArgument` error; operating-system failures
//! are `BackendFailure` errors with the `io::Error` as source. A header promising more
//! elements than memory can hold fails with an error, never an abort.
//!
//! ```
//! use strata_tensor::{Tensor, TypedTensor, npy};
//! let dir = std::env::temp_dir().join(format!("strata-npy-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let t = TypedTensor::from_fn(&[2, 3], |i| (3 * i[0] + i[1]) as f32)?;
//! npy::save(dir.join("t.npy"), &t)?; // np.load("t.npy") reads it back
//! let back: Tensor = npy::load(dir.join("t.npy"))?;
//! assert_eq!(back.as_typed::<f32>()?, &t);
//! // An archive of named arrays, as np.savez writes them.
//! let ids = TypedTensor::from_vec(vec![7i64, 8], &[2])?;
//! npy::save_npz(dir.join("both.npz"), &[("t", (&t).into()), ("ids", (&ids).into())])?;
//! let arrays = npy::load_npz(dir.join("both.npz"))?;
//! assert_eq!(arrays[1].0, "ids");
//! assert_eq!(arrays[1].1.to_vec::<i64>()?, [7, 8]);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), strata_tensor::Error>(())
//! ```

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};
use std::path::Path;

use npyz::{AutoSerialize, Deserialize, NpyFile, Order, TypeChar, WriteOptions, WriterBuilder};

use crate::access::TensorRead;
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::scalar::Scalar;
use crate::shape::checked_len;
use crate::tensor::{Tensor, TypedTensor};
use crate::view::TypedView;

/// Reads the `.npy` file at `path` (numpy's `np.load` of one array).
pub fn load(path: impl AsRef<Path>) -> Result<Tensor> {
    const OP: &str = "npy::load";
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| io_error(OP, &format!("cannot open {}", path.display()), e))?;
    read(BufReader::new(file)).map_err(|e| e.in_op(OP))
}

/// Writes `x` to a `.npy` file at `path` (numpy's `np.save`), replacing any file there.
pub fn save<'a>(path: impl AsRef<Path>, x: impl Into<TensorRead<'a>>) -> Result<()> {
    const OP: &str = "npy::save";
    let path = path.as_ref();
    let file = File::create(path).map_err(|e| io_error(OP, &format!("cannot create {}", path.display()), e))?;
    let mut out = BufWriter::new(file);
    write(&mut out, x).map_err(|e| e.in_op(OP))?;
    out.flush().map_err(|e| io_error(OP, &format!("cannot write {}", path.display()), e))
}

/// Reads one `.npy` stream (header and data) from `reader`.
pub fn read(reader: impl Read) -> Result<Tensor> {
    const OP: &str = "npy::read";
    let npy = NpyFile::new(reader).map_err(|e| io_error(OP, "cannot read the .npy header", e))?;
    let dtype = strata_dtype(OP, &npy)?;
    let shape = npy
        .shape()
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<std::result::Result<Vec<usize>, _>>()
        .map_err(|_| Error::invalid_argument(OP, format!("shape {:?} does not fit in usize", npy.shape())))?;
    let fortran = npy.order() == Order::Fortran;
    crate::dispatch_dtype!(dtype, T => read_typed::<T>(npy, &shape, fortran).map(Tensor::from))
}

/// Writes `x` as one `.npy` stream (little-endian, C order) to `writer`.
pub fn write<'a>(writer: impl Write, x: impl Into<TensorRead<'a>>) -> Result<()> {
    let x = x.into();
    crate::dispatch_dtype!(x.dtype(), T => write_typed::<T, _>(writer, &x.typed_view::<T>()?))
}

/// Reads every array of the `.npz` archive at `path` (stored or deflate-compressed, as
/// `np.savez` and `np.savez_compressed` write), in archive order, named without `.npy`.
pub fn load_npz(path: impl AsRef<Path>) -> Result<Vec<(String, Tensor)>> {
    const OP: &str = "npy::load_npz";
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| io_error(OP, &format!("cannot open {}", path.display()), e))?;
    read_npz(BufReader::new(file)).map_err(|e| e.in_op(OP))
}

/// Reads every array of an `.npz` archive from `reader`.
pub fn read_npz(reader: impl Read + Seek) -> Result<Vec<(String, Tensor)>> {
    const OP: &str = "npy::read_npz";
    let mut archive = zip::ZipArchive::new(reader).map_err(|e| zip_error(OP, "cannot open the archive", e))?;
    let mut out = Vec::with_capacity(archive.len().min(1024));
    for index in 0..archive.len() {
        let entry = archive.by_index(index).map_err(|e| zip_error(OP, &format!("cannot read entry {index}"), e))?;
        let name = entry.name().to_string();
        let key = name.strip_suffix(".npy").unwrap_or(&name).to_string();
        let tensor = read(entry).map_err(|e| Error::new(e.kind(), OP, format!("array {key:?}: {}", e.message())))?;
        out.push((key, tensor));
    }
    Ok(out)
}

/// Writes `arrays` as an uncompressed `.npz` archive at `path` (numpy's `np.savez`; each
/// array becomes `NAME.npy`).
pub fn save_npz(path: impl AsRef<Path>, arrays: &[(&str, TensorRead<'_>)]) -> Result<()> {
    const OP: &str = "npy::save_npz";
    let path = path.as_ref();
    let file = File::create(path).map_err(|e| io_error(OP, &format!("cannot create {}", path.display()), e))?;
    write_npz(BufWriter::new(file), arrays).map_err(|e| e.in_op(OP))
}

/// Writes `arrays` as an uncompressed `.npz` archive to `writer`.
pub fn write_npz(writer: impl Write + Seek, arrays: &[(&str, TensorRead<'_>)]) -> Result<()> {
    const OP: &str = "npy::write_npz";
    let mut zip = zip::ZipWriter::new(writer);
    for (name, x) in arrays {
        // Entries past 4 GiB need the zip64 extension, as numpy's writer uses.
        let large = x.len().saturating_mul(x.dtype().size_bytes()) >= (u32::MAX as usize);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .large_file(large);
        zip.start_file(format!("{name}.npy"), options)
            .map_err(|e| zip_error(OP, &format!("cannot start entry {name:?}"), e))?;
        write(&mut zip, x.clone()).map_err(|e| Error::new(e.kind(), OP, format!("array {name:?}: {}", e.message())))?;
    }
    let mut inner = zip.finish().map_err(|e| zip_error(OP, "cannot finish the archive", e))?;
    inner.flush().map_err(|e| io_error(OP, "cannot write the archive", e))
}

/// The strata dtype of a file's elements, or an `Unsupported` error naming what it is.
fn strata_dtype<R: Read>(op: &'static str, npy: &NpyFile<R>) -> Result<DType> {
    let descr = npy.dtype().descr();
    let unsupported = |what: &str| {
        Error::unsupported(
            op,
            format!("the file holds {what} (descr {descr}); strata reads float32/64, int32/64, bool and complex64/128"),
        )
    };
    let npyz::DType::Plain(ts) = npy.dtype() else {
        return Err(unsupported("a structured array"));
    };
    if npy.uses_pickled_array() {
        return Err(unsupported("Python objects"));
    }
    match (ts.type_char(), ts.size_field()) {
        (TypeChar::Float, 4) => Ok(DType::F32),
        (TypeChar::Float, 8) => Ok(DType::F64),
        (TypeChar::Int, 4) => Ok(DType::I32),
        (TypeChar::Int, 8) => Ok(DType::I64),
        (TypeChar::Bool, 1) => Ok(DType::Bool),
        (TypeChar::Complex, 8) => Ok(DType::C32),
        (TypeChar::Complex, 16) => Ok(DType::C64),
        (TypeChar::Float, bytes) => Err(unsupported(&format!("{}-bit floats", bytes * 8))),
        (TypeChar::Int, bytes) => Err(unsupported(&format!("{}-bit integers", bytes * 8))),
        (TypeChar::Uint, bytes) => Err(unsupported(&format!("unsigned {}-bit integers", bytes * 8))),
        (TypeChar::Complex, bytes) => Err(unsupported(&format!("{}-bit complex numbers", bytes * 8))),
        _ => Err(unsupported("a dtype without a strata counterpart")),
    }
}

fn read_typed<T: Scalar + Deserialize>(
    npy: NpyFile<impl Read>,
    shape: &[usize],
    fortran: bool,
) -> Result<TypedTensor<T>> {
    const OP: &str = "npy::read";
    let len = checked_len(OP, shape)?;
    let reader = npy.data::<T>().map_err(|e| Error::unsupported(OP, format!("{e}")))?;
    let mut data = Vec::new();
    // A lying header must not abort the process: reserve fallibly, then fill.
    data.try_reserve_exact(len).map_err(|e| {
        Error::backend_failure(OP, format!("cannot allocate the {len} elements the header announces")).with_source(e)
    })?;
    for item in reader {
        data.push(item.map_err(|e| io_error(OP, "cannot read the data", e))?);
    }
    if data.len() != len {
        return Err(Error::invalid_argument(
            OP,
            format!("the header announces {len} elements, the data holds {}", data.len()),
        ));
    }
    if !fortran || shape.len() < 2 {
        return TypedTensor::from_vec(data, shape);
    }
    // Fortran order: the file lists the elements column-major.
    let column_major = TypedView::column_major(&data, shape)?;
    TypedTensor::from_fn(shape, |i| *column_major.get(i).unwrap_or(&T::zero()))
}

fn write_typed<T: Scalar + AutoSerialize, W: Write>(writer: W, x: &TypedView<'_, T>) -> Result<()> {
    const OP: &str = "npy::write";
    let shape: Vec<u64> = x.shape().iter().map(|&d| d as u64).collect();
    let mut out = WriteOptions::<T>::new()
        .default_dtype()
        .shape(&shape)
        .writer(writer)
        .begin_nd()
        .map_err(|e| io_error(OP, "cannot write the header", e))?;
    let failed = |e| io_error(OP, "cannot write the data", e);
    if let Some(data) = x.as_contiguous() {
        out.extend(data.iter().copied()).map_err(failed)?;
    } else if !x.is_empty() {
        // Walk the view in row-major order.
        let mut index = vec![0usize; x.rank()];
        loop {
            // INVARIANT: `index` stays below the shape, so the element exists.
            if let Some(v) = x.get(&index) {
                out.push(v).map_err(failed)?;
            }
            let mut axis = x.rank();
            loop {
                if axis == 0 {
                    return out.finish().map_err(failed);
                }
                axis -= 1;
                index[axis] += 1;
                if index[axis] < x.shape()[axis] {
                    break;
                }
                index[axis] = 0;
            }
        }
    }
    out.finish().map_err(failed)
}

/// An I/O failure: malformed or truncated content is the caller's input
/// (`InvalidArgument`), anything else the operating system's (`BackendFailure`).
fn io_error(op: &'static str, what: &str, e: io::Error) -> Error {
    let kind = match e.kind() {
        io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof => ErrorKind::InvalidArgument,
        _ => ErrorKind::BackendFailure,
    };
    Error::new(kind, op, format!("{what}: {e}")).with_source(e)
}

fn zip_error(op: &'static str, what: &str, e: zip::result::ZipError) -> Error {
    match e {
        zip::result::ZipError::Io(io) => io_error(op, what, io),
        other => Error::invalid_argument(op, format!("{what}: {other}")).with_source(other),
    }
}
