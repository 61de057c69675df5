#!/usr/bin/env python3
"""Generates the einsum test fixtures from numpy 2.4 and opt_einsum 3.4.

    /tmp/pyenv/bin/python crates/einsum/tests/data/generate.py

writes, next to this script:

- numpy_cases.txt: for every case, numpy.einsum's result (np.einsum without `optimize`,
  numpy's reference semantics) on operands filled by the formula `value` below, which the
  Rust tests reproduce bit for bit; plus the scale of the terms (the same einsum over the
  absolute values) and the number of terms per output element, for a tolerance that
  follows from the accumulation error bound.
- paths.txt: for tensor networks, opt_einsum's `optimal` cost (`PathInfo.opt_cost`, the
  flops of the cheapest pairwise order, outer products included).

Tests in CI read these files only; Python is needed only to regenerate them.
"""

import os
import random

import numpy as np
import opt_einsum as oe

HERE = os.path.dirname(os.path.abspath(__file__))

NP_DTYPE = {
    "f32": np.float32,
    "f64": np.float64,
    "c32": np.complex64,
    "c64": np.complex128,
    "i32": np.int32,
    "i64": np.int64,
}


def value(k, i):
    """The real formula: operand k, row-major element i (identical in the Rust tests)."""
    return ((i * 7919 + k * 104729 + 13) % 1999) / 1999.0 - 0.5


def int_value(k, i):
    return ((i * 7919 + k * 104729 + 13) % 19) - 9


def operand(k, shape, dtype):
    n = int(np.prod(shape, dtype=np.int64))
    idx = range(n)
    if dtype in ("i32", "i64"):
        data = np.array([int_value(k, i) for i in idx], dtype=np.int64)
    elif dtype in ("c32", "c64"):
        data = np.array([complex(value(k, 2 * i), value(k, 2 * i + 1)) for i in idx], dtype=np.complex128)
    else:
        data = np.array([value(k, i) for i in idx], dtype=np.float64)
    return data.astype(NP_DTYPE[dtype]).reshape(shape)


def fmt_shape(s):
    return ",".join(str(d) for d in s) if len(s) else "-"


def fmt_values(arr, dtype):
    flat = np.asarray(arr).reshape(-1)
    if dtype in ("i32", "i64"):
        return " ".join(str(int(x)) for x in flat)
    if dtype in ("c32", "c64"):
        return " ".join(f"{float(x.real)!r} {float(x.imag)!r}" for x in flat)
    return " ".join(repr(float(x)) for x in flat)


FLOAT = ["f64", "f32", "c64", "c32"]
ALL = FLOAT + ["i64", "i32"]
REAL = ["f64", "f32"]

# (name, spec, shapes, dtypes)
CASES = [
    # matrix products and their transposes
    ("matmul", "ij,jk->ik", [(3, 4), (4, 5)], ALL),
    ("matmul_implicit", "ij,jk", [(3, 4), (4, 5)], REAL),
    ("matmul_rhs_transposed", "ij,kj->ik", [(3, 4), (5, 4)], FLOAT),
    ("matmul_out_transposed", "ij,jk->ki", [(3, 4), (4, 5)], FLOAT),
    ("matmul_lhs_transposed", "ji,jk->ik", [(4, 3), (4, 5)], REAL),
    ("matvec", "ij,j->i", [(5, 4), (4,)], ALL),
    ("vecmat", "j,jk->k", [(4,), (4, 6)], REAL),
    ("dot", "i,i->", [(7,), (7,)], ALL),
    ("dot_implicit", "i,i", [(7,), (7,)], REAL),
    ("uppercase_letters", "aB,Bc->ac", [(3, 4), (4, 2)], REAL),
    ("uppercase_implicit_order", "Ab,bA", [(2, 3), (3, 2)], REAL),
    ("mixed_case_implicit", "zB,Ba", [(2, 3), (3, 4)], REAL),
    ("spaces", " ij , jk -> ik ", [(2, 3), (3, 2)], REAL),
    # outer and elementwise products, broadcasts
    ("outer", "i,j->ij", [(3,), (4,)], ALL),
    ("outer_implicit", "j,i", [(3,), (4,)], REAL),
    ("outer3", "i,j,k->ijk", [(2,), (3,), (4,)], FLOAT),
    ("outer_matrices", "ij,kl->ikjl", [(2, 3), (2, 2)], REAL),
    ("hadamard", "ij,ij->ij", [(3, 4), (3, 4)], ALL),
    ("hadamard_transposed", "ij,ji->ij", [(3, 4), (4, 3)], FLOAT),
    ("row_scale", "ij,j->ij", [(3, 4), (4,)], ALL),
    ("column_scale_out_transposed", "ij,i->ji", [(3, 4), (3,)], REAL),
    ("triple_hadamard", "i,i,i->i", [(5,), (5,), (5,)], ALL),
    ("hyperedge_star", "ij,ik,il->jkl", [(4, 2), (4, 3), (4, 2)], FLOAT),
    # single-operand: transposes, sums, diagonals, traces
    ("transpose", "ij->ji", [(3, 4)], ALL),
    ("permute3", "ijk->kij", [(2, 3, 4)], REAL),
    ("identity", "ij->ij", [(3, 4)], REAL),
    ("sum_all", "ij->", [(3, 4)], ALL),
    ("sum_rows", "ij->j", [(3, 4)], ALL),
    ("sum_middle", "ijk->ik", [(2, 3, 4)], FLOAT),
    ("sum_and_transpose", "ijk->kj", [(2, 3, 4)], REAL),
    ("diagonal", "ii->i", [(4, 4)], ALL),
    ("trace", "ii->", [(4, 4)], ALL),
    ("trace_implicit", "ii", [(4, 4)], REAL),
    ("diagonal3", "iii->i", [(3, 3, 3)], REAL),
    ("diagonal_kept_axis", "iij->ji", [(3, 3, 2)], FLOAT),
    ("two_diagonals", "ijij->ij", [(2, 3, 2, 3)], REAL),
    ("batched_trace", "bii->b", [(3, 4, 4)], ALL),
    ("diagonal_into_output_twice", "iji->ij", [(3, 2, 3)], REAL),
    # summed on one operand only, then contracted
    ("sum_then_contract", "ijk,jl->il", [(2, 3, 4), (3, 5)], FLOAT),
    ("both_sum_alone", "ij,kl->", [(2, 3), (4, 5)], REAL),
    ("both_sum_alone_keep", "ij,kl->ik", [(2, 3), (4, 5)], REAL),
    ("diagonal_then_contract", "iij,jk->ik", [(3, 3, 4), (4, 2)], FLOAT),
    ("trace_times_matrix", "ii,jk->jk", [(3, 3), (2, 2)], REAL),
    ("contracted_in_different_orders", "ijk,ikj->i", [(2, 3, 4), (2, 4, 3)], FLOAT),
    # batched
    ("batched_matmul", "bij,bjk->bik", [(3, 2, 4), (3, 4, 5)], ALL),
    ("batched_matmul_out_permuted", "bij,bjk->kbi", [(3, 2, 4), (3, 4, 5)], FLOAT),
    ("batched_last", "ijb,jkb->ikb", [(2, 4, 3), (4, 5, 3)], FLOAT),
    ("batched_dot", "bi,bi->b", [(4, 6), (4, 6)], ALL),
    ("batched_outer", "bi,bj->bij", [(3, 2), (3, 4)], REAL),
    ("two_batch_axes", "abij,abjk->abik", [(2, 3, 2, 4), (2, 3, 4, 2)], FLOAT),
    ("batch_in_middle", "iaj,jak->aik", [(2, 3, 4), (4, 3, 2)], REAL),
    # ellipsis and broadcasting
    ("ellipsis_matmul", "...ij,...jk->...ik", [(2, 3, 4), (4, 5)], FLOAT),
    ("ellipsis_broadcast_batch", "...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)], REAL),
    ("ellipsis_diagonal", "...ii->...i", [(2, 3, 3)], FLOAT),
    ("ellipsis_trace_implicit", "...ii", [(2, 3, 3)], REAL),
    ("ellipsis_first_sum", "i...->...", [(3, 2, 2)], REAL),
    ("ellipsis_empty", "i...->...", [(3,)], REAL),
    ("ellipsis_middle", "a...b,b...c->...ac", [(2, 3, 4), (4, 3, 2)], REAL),
    ("ellipsis_broadcast_product", "...,...->...", [(2, 1), (3,)], ALL),
    ("ellipsis_implicit_broadcast", "...i,...i", [(4, 3), (2, 1, 3)], REAL),
    ("ellipsis_identity", "...->...", [(2, 3)], REAL),
    ("ellipsis_output_only", "ij->i...", [(2, 3)], REAL),
    ("ellipsis_start_and_end", "i...,...j->...ij", [(2, 3, 2), (3, 2, 4)], REAL),
    ("size1_broadcast_elementwise", "ij,ij->ij", [(2, 3), (1, 3)], ALL),
    ("size1_broadcast_contracted", "ij,jk->ik", [(2, 1), (3, 4)], FLOAT),
    ("size1_broadcast_dot", "i,i", [(3,), (1,)], REAL),
    ("size1_both_sides", "ij,ij,ij->ij", [(2, 3), (1, 3), (2, 1)], REAL),
    ("size1_everywhere", "ij,jk->ik", [(1, 1), (1, 1)], REAL),
    ("size1_label_kept", "iaj,jbk->iabk", [(2, 1, 3), (3, 1, 2)], REAL),
    # scalars and empty tensors
    ("scalar_product", ",->", [(), ()], ALL),
    ("scalar_times_vector", "i,->i", [(3,), ()], REAL),
    ("scalar_identity", "->", [()], REAL),
    ("empty_contracted", "ij,jk->ik", [(2, 0), (0, 3)], FLOAT),
    ("empty_free", "ij,jk->ik", [(0, 3), (3, 2)], REAL),
    ("empty_sum", "ij->", [(0, 3)], REAL),
    ("empty_trace", "ii->", [(0, 0)], REAL),
    ("empty_broadcast", "...i,...i", [(0, 3), (1, 3)], REAL),
    # networks of 3-8 operands
    ("chain3", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], ALL),
    ("chain4", "ij,jk,kl,lm->im", [(2, 3), (3, 4), (4, 3), (3, 2)], FLOAT),
    ("triangle", "ij,jk,ki->", [(3, 4), (4, 5), (5, 3)], FLOAT),
    ("ring5", "ab,bc,cd,de,ea->", [(2, 3), (3, 2), (2, 4), (4, 2), (2, 2)], REAL),
    ("tree4", "abc,cd,dbe->ae", [(2, 3, 4), (4, 5), (5, 3, 2)], FLOAT),
    ("four_ladder", "abc,bcd,cde,def->af", [(2, 3, 2, ), (3, 2, 3), (2, 3, 2), (3, 2, 2)], REAL),
    ("three_with_hyperedge", "ab,ac,ad->bcd", [(3, 2), (3, 2), (3, 2)], ALL),
    ("six_operands", "ab,bc,cd,de,ef,fa->", [(2, 3), (3, 2), (2, 3), (3, 2), (2, 3), (3, 2)], REAL),
    ("eight_operands", "ab,bc,cd,de,ef,fg,gh,ha->ae",
     [(2, 2), (2, 3), (3, 2), (2, 2), (2, 3), (3, 2), (2, 2), (2, 2)], FLOAT),
    ("seven_star_and_chain", "xa,xb,xc,ad,be,cf,def->x",
     [(3, 2), (3, 2), (3, 2), (2, 2), (2, 2), (2, 2), (2, 2, 2)], REAL),
    # tensor networks
    ("mps_left_environment", "ab,asc,bsd->cd", [(4, 4), (4, 2, 4), (4, 2, 4)], FLOAT),
    ("mps_mpo_environment", "abc,asd,bste,ctf->def", [(3, 2, 3), (3, 2, 3), (2, 2, 2, 2), (3, 2, 3)], FLOAT),
    ("dmrg_two_site_heff", "aeb,astd,efsu,fgtv,dgc->buvc",
     [(3, 2, 3), (3, 2, 2, 3), (2, 2, 2, 2), (2, 2, 2, 2), (3, 2, 3)], FLOAT),
    ("tebd_gate", "astd,stuv->auvd", [(3, 2, 2, 3), (2, 2, 2, 2)], FLOAT),
    ("ctmrg_corner_move", "ab,bcd,aef,dfgh->cegh", [(4, 4), (4, 4, 2), (4, 4, 2), (2, 2, 2, 2)], REAL),
    ("peps_double_layer", "lurds,LURDs->lLuUrRdD", [(2, 2, 2, 2, 2), (2, 2, 2, 2, 2)], FLOAT),
    ("peps_2x2_norm", "aixs,bjys,akzt,blwt,ijkl->xyzw",
     [(2, 2, 2, 2), (2, 2, 2, 2), (2, 2, 2, 2), (2, 2, 2, 2), (2, 2, 2, 2)], REAL),
    ("mera_ascending", "abcd,aeg,bfh,ijef,gimk,hjnl->klmncd",
     [(2, 2, 2, 2), (2, 2, 2), (2, 2, 2), (2, 2, 2, 2), (2, 2, 2, 2), (2, 2, 2, 2)], REAL),
]


def write_cases(path):
    with open(path, "w") as f:
        f.write("# Generated by generate.py from numpy %s: np.einsum results on formula operands.\n" % np.__version__)
        for name, spec, shapes, dtypes in CASES:
            for dtype in dtypes:
                ops = [operand(k, s, dtype) for k, s in enumerate(shapes)]
                want = np.einsum(spec, *ops)
                absolute = np.einsum(spec, *[np.abs(o).astype(np.float64) for o in ops])
                scale = float(np.max(absolute)) if np.size(absolute) else 0.0
                # Terms per output element: product of the extents summed over.
                inputs, output, _ = oe.parser.parse_einsum_input((spec, *ops))
                sizes = {}
                for term, o in zip(inputs.split(","), ops):
                    for l, dim in zip(term, np.shape(o)):
                        sizes[l] = dim if sizes.get(l, 1) == 1 else sizes[l]
                out_labels = set(output)
                in_labels = set("".join(inputs.split(",")))
                terms = 1
                for l in in_labels - out_labels:
                    terms *= sizes[l]
                f.write(f"case {name}\n")
                f.write(f"spec {spec}\n")
                f.write("shapes " + ";".join(fmt_shape(s) for s in shapes) + "\n")
                f.write(f"dtype {dtype}\n")
                f.write(f"out {fmt_shape(np.shape(want))}\n")
                f.write(f"scale {scale!r}\n")
                f.write(f"terms {terms}\n")
                f.write(f"values {fmt_values(want, dtype)}\n")


LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def random_network(rng, n, extra, hyper, outputs):
    """A connected network: a random tree plus `extra` bonds, `hyper` labels on three
    tensors and `outputs` open legs; every label on at least two tensors or the output."""
    terms = [[] for _ in range(n)]
    li = 0
    for k in range(1, n):
        j = rng.randrange(k)
        terms[k].append(LETTERS[li])
        terms[j].append(LETTERS[li])
        li += 1
    for _ in range(extra):
        a, b = rng.sample(range(n), 2)
        terms[a].append(LETTERS[li])
        terms[b].append(LETTERS[li])
        li += 1
    for _ in range(hyper):
        for t in rng.sample(range(n), 3):
            terms[t].append(LETTERS[li])
        li += 1
    out = []
    for _ in range(outputs):
        terms[rng.randrange(n)].append(LETTERS[li])
        out.append(LETTERS[li])
        li += 1
    sizes = {c: rng.choice([2, 3, 4, 5, 6, 8, 16]) for c in LETTERS[:li]}
    spec = ",".join("".join(t) for t in terms) + "->" + "".join(out)
    return spec, [tuple(sizes[c] for c in t) for t in terms]


def tn_networks():
    chi, d, w = 32, 2, 5
    return [
        ("mps_env", "ab,asc,bsd->cd", [(chi, chi), (chi, d, chi), (chi, d, chi)]),
        ("mps_mpo_env", "abc,asd,bste,ctf->def", [(chi, w, chi), (chi, d, chi), (w, d, d, w), (chi, d, chi)]),
        ("dmrg_heff", "aeb,astd,efsu,fgtv,dgc->buvc",
         [(chi, w, chi), (chi, d, d, chi), (w, w, d, d), (w, w, d, d), (chi, w, chi)]),
        ("tebd", "astd,stuv->auvd", [(chi, d, d, chi), (d, d, d, d)]),
        ("ctmrg", "ab,bcd,aef,dfgh->cegh", [(chi, chi), (chi, chi, 4), (chi, chi, 4), (4, 4, 4, 4)]),
        ("peps_2x2", "aixs,bjys,akzt,blwt,ijkl->xyzw", [(4, 4, 4, 2), (4, 4, 4, 2), (4, 4, 4, 2), (4, 4, 4, 2), (4, 4, 4, 4)]),
        ("mera", "abcd,aeg,bfh,ijef,gimk,hjnl->klmncd",
         [(8, 8, 8, 8), (8, 8, 8), (8, 8, 8), (8, 8, 8, 8), (8, 8, 8, 8), (8, 8, 8, 8)]),
        ("chain_lopsided", "ij,jk,kl,lm,mn->in", [(2, 64), (64, 8), (8, 128), (128, 4), (4, 64)]),
        ("outer_pays", "i,j,ij->", [(100,), (100,), (100, 100)]),
        ("hyper_star", "ai,bi,ci,di->abcd", [(4, 50), (4, 50), (4, 50), (4, 50)]),
    ]


def write_paths(path):
    rng = random.Random(17)
    nets = tn_networks()
    for n in range(3, 11):
        for r in range(3 if n <= 8 else 1):
            spec, shapes = random_network(rng, n, extra=rng.randrange(0, 3), hyper=rng.randrange(0, 2),
                                          outputs=rng.randrange(0, 3))
            nets.append((f"random{n}_{r}", spec, shapes))
    with open(path, "w") as f:
        f.write("# Generated by generate.py from opt_einsum %s: name|spec|shapes|optimal opt_cost\n" % oe.__version__)
        for name, spec, shapes in nets:
            info = oe.contract_path(spec, *shapes, shapes=True, optimize="optimal")[1]
            f.write(f"{name}|{spec}|{';'.join(fmt_shape(s) for s in shapes)}|{int(info.opt_cost)}\n")


if __name__ == "__main__":
    write_cases(os.path.join(HERE, "numpy_cases.txt"))
    write_paths(os.path.join(HERE, "paths.txt"))
