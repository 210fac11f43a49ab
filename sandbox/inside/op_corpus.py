# mypy: disable-error-code="no-untyped-call,call-overload"
# (the corpus calls JAX as learners do, lambdas and all; what it lowers to is what matters, not its types)
"""The programs the op policy is derived from: JAX's own lowerings of its own functions.

``sandbox.inside.op_policy`` accepts a program only when every op, every attribute name of each op, every
enumerated attribute value (a comparison's direction and type, a dot's precision, an FFT's type...) for the
kind of element it applies to, and every op inside a region an op hands to its kernel is one JAX's lowering
makes. What JAX's lowering makes is read here, from modules lowered by the tracer's own path
(``sandbox.inside.lowering.Lowerer``) for a corpus of JAX functions that reaches its lowering rules:
``lax``'s elementwise ops on every element kind, reductions (built-in and user-written), scans, loops,
conditionals, gathers and scatters (every ``.at[]`` update), sorts, windows and their gradients,
convolutions, FFTs, dots at every precision, random numbers with key arrays, checkpointing, custom
derivatives, linear algebra, and meshes (constraints, reshards, ``shard_map`` with every collective).

``python -m sandbox.inside.op_corpus --write`` lowers the corpus and writes the table
(``op_table.json``, keyed by the JAX version it was derived from); ``--check`` regenerates it and says
whether the committed table is still JAX's. The executor reads the table at start (no lowering); with
another JAX version than the table's it derives the table itself before reporting ready
(``load_table``). Sort comparators are not read from here: each is compared with JAX's lowering
of ``lax.sort`` for the same operand types (``op_policy.Comparators``).

It runs at build time and in the executor: it imports only JAX, NumPy, the standard library and
``op_policy`` (whose ``Collected`` reads the lowered modules into its ``Table``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sandbox.inside.op_policy import Collected, Table, collect

#: Where the derived table lives, beside this module.
TABLE = Path(__file__).with_name("op_table.json")
#: Devices the mesh part of the corpus is lowered for (the device-mesh problem's 8, as a 4 x 2 mesh).
MESH_DEVICES = 8

Entry = tuple[str, Callable[..., Any], tuple[Any, ...]]


def _elementwise(jnp: Any, lax: Any) -> list[tuple[str, Callable[[Any], Any], Callable[[Any, Any], Any]]]:
    """Unary and binary functions per element kind (a scalar function works on any shape)."""

    def floats_unary(x: Any) -> Any:
        parts = [
            jnp.abs(x),
            -x,
            jnp.sign(x),
            jnp.floor(x),
            jnp.ceil(x),
            jnp.round(x),
            lax.round(x),
            jnp.exp(x),
            jnp.exp2(x),
            jnp.expm1(x),
            jnp.log(x),
            jnp.log1p(x),
            jnp.log2(x),
            jnp.sqrt(x),
            lax.rsqrt(x),
            jnp.cbrt(x),
            jnp.sin(x),
            jnp.cos(x),
            jnp.tan(x),
            jnp.arcsin(x),
            jnp.arccos(x),
            jnp.arctan(x),
            jnp.sinh(x),
            jnp.cosh(x),
            jnp.tanh(x),
            jnp.arcsinh(x),
            jnp.arccosh(x),
            jnp.arctanh(x),
            lax.logistic(x),
            jnp.isfinite(x),
            jnp.isnan(x),
            jnp.isinf(x),
            lax.erf(x),
            lax.erfc(x),
            lax.erf_inv(x),
            lax.lgamma(x),
            lax.digamma(x),
            lax.square(x),
            lax.integer_pow(x, 3),
            lax.integer_pow(x, -2),
            jnp.reciprocal(x),
            lax.reduce_precision(x, 5, 10),
            lax.bessel_i0e(x),
            lax.bessel_i1e(x),
            jnp.signbit(x),
            lax.is_finite(x),
            x.astype(jnp.int32),
            x.astype(jnp.uint8),
            x.astype(jnp.bool_),
            x.astype(jnp.bfloat16),
            x.astype(jnp.float16),
            lax.stop_gradient(x),
            jnp.nan_to_num(x),
            jnp.clip(x, -1, 1),
            jnp.heaviside(x, 0.5),
        ]
        return parts

    def floats_binary(x: Any, y: Any) -> Any:
        return [
            x + y,
            x - y,
            x * y,
            x / y,
            x**y,
            jnp.maximum(x, y),
            jnp.minimum(x, y),
            jnp.fmax(x, y),
            jnp.fmin(x, y),
            lax.rem(x, y),
            jnp.mod(x, y),
            jnp.floor_divide(x, y),
            jnp.arctan2(x, y),
            lax.nextafter(x, y),
            x < y,
            x <= y,
            x > y,
            x >= y,
            x == y,
            x != y,
            jnp.hypot(x, y),
            lax.igamma(x, y),
            lax.igammac(x, y),
            lax.polygamma(jnp.ones_like(x), y),
            lax.zeta(x, y),
            lax.random_gamma_grad(x, y),
            jnp.copysign(x, y),
            jnp.logaddexp(x, y),
            lax.clamp(x, y, x + 1),
            jnp.where(x > 0, x, y),
            lax.complex(x.astype(jnp.float32), y.astype(jnp.float32)),
            jnp.ldexp(x, y.astype(jnp.int32)),
            lax.betainc(x, y, x),
            lax.bessel_i1e(x),
        ]

    def ints_unary(x: Any) -> Any:
        return [
            -x,
            jnp.abs(x),
            jnp.sign(x),
            ~x,
            lax.population_count(x),
            lax.clz(x),
            x.astype(jnp.float32),
            x.astype(jnp.bfloat16),
            x.astype(jnp.int8),
            x.astype(jnp.uint32),
            x.astype(jnp.bool_),
            lax.integer_pow(x, 2),
            lax.square(x),
        ]

    def ints_binary(x: Any, y: Any) -> Any:
        return [
            x + y,
            x - y,
            x * y,
            x // y,
            x % y,
            lax.div(x, y),
            lax.rem(x, y),
            x & y,
            x | y,
            x ^ y,
            x << y,
            x >> y,
            lax.shift_right_logical(x, y),
            jnp.maximum(x, y),
            jnp.minimum(x, y),
            x < y,
            x <= y,
            x > y,
            x >= y,
            x == y,
            x != y,
            lax.clamp(x, y, x + 1),
            x**2,
            jnp.where(x > y, x, y),
            jnp.gcd(x, y),
        ]

    def bools_unary(x: Any) -> Any:
        return [~x, x.astype(jnp.float32), x.astype(jnp.int32), x.astype(jnp.uint8), jnp.logical_not(x)]

    def bools_binary(x: Any, y: Any) -> Any:
        return [
            x & y,
            x | y,
            x ^ y,
            x == y,
            x != y,
            x < y,
            x > y,
            x <= y,
            x >= y,
            jnp.where(x, x, y),
            jnp.logical_and(x, y),
            jnp.maximum(x, y),
            jnp.minimum(x, y),
        ]

    def complex_unary(x: Any) -> Any:
        return [
            jnp.real(x),
            jnp.imag(x),
            jnp.conj(x),
            jnp.abs(x),
            jnp.exp(x),
            jnp.log(x),
            jnp.sqrt(x),
            -x,
            jnp.angle(x),
            jnp.sin(x),
            jnp.cos(x),
            jnp.tanh(x),
            lax.rsqrt(x),
            jnp.isfinite(x),
            x * x,
            jnp.sign(x),
            jnp.expm1(x),
            jnp.log1p(x),
            lax.integer_pow(x, 3),
        ]

    def complex_binary(x: Any, y: Any) -> Any:
        return [x + y, x - y, x * y, x / y, x**y, x == y, x != y, jnp.where(jnp.real(x) > 0, x, y)]

    return [
        ("float", floats_unary, floats_binary),
        ("int", ints_unary, ints_binary),
        ("bool", bools_unary, bools_binary),
        ("complex", complex_unary, complex_binary),
    ]


def entries() -> Iterator[Entry]:
    """(name, function, abstract inputs) for every program of the corpus on one device."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    S = jax.ShapeDtypeStruct
    f32, bf16, f16, i32, u8, u32, b = (
        jnp.float32,
        jnp.bfloat16,
        jnp.float16,
        jnp.int32,
        jnp.uint8,
        jnp.uint32,
        jnp.bool_,
    )
    i8, i16, u16 = jnp.int8, jnp.int16, jnp.uint16
    c64 = jnp.complex64
    v = (6,)
    m = (4, 6)

    kinds = {
        "float": (f32, bf16, f16),
        "int": (i32, i8, i16, u8, u16, u32),
        "bool": (b,),
        "complex": (c64,),
    }
    for kind, unary, binary in _elementwise(jnp, lax):
        for dtype in kinds[kind]:
            name = jnp.dtype(dtype).name
            yield f"unary {name}", unary, (S(v, dtype),)
            yield f"binary {name}", binary, (S(v, dtype), S(v, dtype))
            yield f"unary scalar {name}", unary, (S((), dtype),)

    # Reductions, built-in and user-written, on every kind; arg-reductions (variadic reduce).
    for dtype in (f32, bf16, f16, i32, u8, u32, b, c64, i8):

        def reductions(x: Any) -> Any:
            out = [jnp.sum(x, axis=0), jnp.prod(x, axis=1), jnp.any(x != 0), jnp.all(x != 0)]
            if not jnp.issubdtype(x.dtype, jnp.complexfloating):
                out += [
                    jnp.max(x, axis=1),
                    jnp.min(x),
                    jnp.argmax(x, axis=1),
                    jnp.argmin(x, axis=0),
                    jnp.sort(x, axis=1),
                    jnp.argsort(x, axis=0),
                    jnp.argsort(x, axis=1, descending=True),
                    jnp.cumsum(x, axis=1),
                    lax.cumlogsumexp(x.astype(jnp.float32), axis=1),
                    jnp.median(x.astype(jnp.float32)),
                    jnp.unique(x, size=3),
                ]
                if x.dtype != jnp.bool_:
                    out += [lax.cummax(x, axis=0), lax.cumprod(x, axis=1), lax.cummin(x, axis=1)]
            return out

        yield f"reductions {jnp.dtype(dtype).name}", reductions, (S(m, dtype),)

    def user_reductions(x: Any, y: Any) -> Any:
        def fancy(a: Any, c: Any) -> Any:
            return jnp.where(a > c, a * 2 - c, jnp.sqrt(jnp.abs(c)) + jnp.exp(-a)) + jnp.tanh(a) * c

        return [
            lax.reduce(x, 0.0, fancy, (0,)),
            lax.reduce(x, 1.0, lax.mul, (1,)),
            lax.reduce((x, y), (-jnp.inf, 0), lambda a, c: (jnp.maximum(a[0], c[0]), a[1] + c[1]), (0,)),
            lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 2), "SAME"),
            lax.reduce_window(x, -jnp.inf, lax.max, (2, 3), (2, 1), "VALID"),
            lax.reduce_window(x, jnp.inf, lax.min, (1, 3), (1, 1), [(0, 1), (1, 1)]),
            lax.reduce_window(x, 1.0, fancy, (2, 2), (1, 1), "VALID"),
            lax.reduce_window(
                y, 0, lax.add, (2, 2), (1, 1), "SAME", base_dilation=(1, 2), window_dilation=(2, 1)
            ),
            lax.associative_scan(jnp.add, x, axis=1),
            lax.associative_scan(lambda a, c: jnp.maximum(a, c) * 0.5 + c, x),
            jax.grad(lambda t: jnp.sum(lax.reduce_window(t, -jnp.inf, lax.max, (2, 2), (2, 2), "VALID")))(x),
            jax.grad(lambda t: jnp.sum(lax.reduce_window(t, 0.0, lax.add, (2, 2), (1, 1), "SAME")))(x),
            jax.grad(lambda t: jnp.sum(jnp.max(t, axis=1)))(x),
            jax.grad(lambda t: jnp.sum(jnp.sort(t, axis=0) * jnp.arange(6.0)))(x),
        ]

    yield "user reductions", user_reductions, (S(m, f32), S(m, i32))

    def user_reductions_bf16(x: Any) -> Any:
        return [
            lax.reduce_window(x, jnp.array(-jnp.inf, x.dtype), lax.max, (2, 2), (2, 2), "VALID"),
            lax.reduce(x, jnp.array(0, x.dtype), lax.add, (0,)),
        ]

    yield "user reductions bf16", user_reductions_bf16, (S(m, bf16),)

    # Gathers and scatters: indexing, every .at[] update, apply, modes, sorted/unique promises.
    for dtype in (f32, i32, b, bf16, c64, u8):

        def indexing(x: Any, i: Any) -> Any:
            is_bool = x.dtype == jnp.bool_
            out = [
                x[i],
                x[:, i],
                x[i, 2],
                x[1:3, ::2],
                x[::-1],
                x[jnp.array([0, 2])],
                x[i, i],
                jnp.take(x, i, axis=1, mode="clip"),
                jnp.take(x, i, axis=0, mode="fill", fill_value=0),
                jnp.take_along_axis(x, jnp.zeros((4, 6), jnp.int32) + i[0], axis=1),
                x.at[i].set(x[0]),
                x.at[i, 1].get(mode="fill", fill_value=0),
                x.at[i].set(x[0], indices_are_sorted=True, unique_indices=True),
                x.at[i].set(x[0], mode="drop"),
                x.at[i, 1].set(x[0, 0], mode="promise_in_bounds"),
                lax.dynamic_slice(x, (i[0], 1), (2, 3)),
                lax.dynamic_update_slice(x, x[:2, :2], (i[0], i[1])),
                lax.dynamic_index_in_dim(x, i[0], 1),
                jnp.where(x != 0, size=3)[0],
            ]
            if not is_bool:
                out += [x.at[i].add(x[0]), x.at[i].multiply(x[1]), x.at[:, i].add(1, mode="drop")]
                if not jnp.issubdtype(x.dtype, jnp.complexfloating):
                    out += [x.at[i].min(x[0]), x.at[i].max(x[1])]
                    out += [x.at[i].apply(lambda t: t * 2 + 1)]
            return out

        yield f"indexing {jnp.dtype(dtype).name}", indexing, (S(m, dtype), S((3,), i32))

    def scatter_apply(x: Any, i: Any) -> Any:
        def f(t: Any) -> Any:
            return jnp.where(t > 0, jnp.sqrt(t) * jnp.exp(-t), jnp.tanh(t) - jnp.log1p(jnp.abs(t))) / (
                t * t + 1
            )

        return [
            x.at[i].apply(f),
            x.at[i, 2].apply(lambda t: jnp.maximum(t, 0.5) ** 2),
            jnp.zeros(5).at[i].add(1),
        ]

    yield "scatter apply", scatter_apply, (S(m, f32), S((3,), i32))

    # Regions handed to kernels hold what JAX lowers for a scalar function: every elementwise op, on
    # every kind, through .at[].apply (scatter) and user-written reductions (reduce, reduce_window).
    for kind, unary, binary in _elementwise(jnp, lax):
        for dtype in kinds[kind][:1]:

            def total(parts: list[Any], like: Any) -> Any:
                summed: Any = sum(jnp.real(jnp.asarray(p)).astype(jnp.float32).sum() for p in parts)
                return summed.astype(like.dtype)

            def regions(x: Any, i: Any, _u: Any = unary, _b: Any = binary) -> Any:
                def reducer(a: Any, c: Any) -> Any:
                    return total(_b(a, c), a)

                out = [x.at[i].apply(lambda t: total(_u(t), t)), lax.reduce(x, x[0], reducer, (0,))]
                if x.dtype != jnp.complex64:
                    out.append(lax.reduce_window(x, x[0], reducer, (2,), (1,), "VALID"))
                return out

            yield f"kernel regions {kind}", regions, (S(v, dtype), S((3,), i32))

    # Shapes and layout.
    def shapes(x: Any, y: Any) -> Any:
        return [
            x.reshape(6, 4),
            x.T,
            jnp.concatenate([x, x], 0),
            jnp.stack([x, x]),
            jnp.pad(x, ((1, 2), (0, 1))),
            jnp.pad(x, 1, mode="reflect"),
            jnp.pad(x, 1, mode="edge"),
            jnp.pad(x, 1, mode="wrap"),
            lax.pad(x, 0.0, [(1, -1, 1), (0, 2, 0)]),
            jnp.flip(x),
            jnp.roll(x, 2, axis=1),
            jnp.broadcast_to(x[0], (3, 6)),
            jnp.tile(x, (2, 1)),
            jnp.repeat(x, 2, axis=0),
            x[:, None, :],
            jnp.squeeze(x[None]),
            jnp.expand_dims(x, 2),
            jnp.moveaxis(x[None], 0, 2),
            jnp.eye(4),
            jnp.tri(4),
            jnp.triu(x),
            jnp.tril(x),
            jnp.diag(x[:, :4]),
            jnp.arange(8.0),
            jnp.linspace(0, 1, 5),
            jnp.meshgrid(x[0], x[:, 0])[0],
            jnp.outer(x[0], x[0]),
            lax.bitcast_convert_type(x, jnp.int32),
            lax.bitcast_convert_type(x, jnp.uint8),
            lax.broadcasted_iota(jnp.int32, (3, 4), 1),
            jnp.split(x, 2, axis=1)[0],
            jnp.einsum("ij->ji", x),
            lax.collapse(x, 0, 2),
            y.reshape(-1),
            jnp.full((2, 2), jnp.nan),
            jnp.zeros((0, 3)),
            lax.optimization_barrier((x, y)),
            jnp.interp(x[0], jnp.arange(6.0), x[1]),
            jnp.searchsorted(jnp.arange(6.0), x[0]),
            jnp.histogram(x, bins=4, range=(0.0, 1.0))[0],
            jnp.bincount(y.reshape(-1) % 4, length=4),
            jnp.percentile(x, 30),
            jnp.nanmean(x),
            jnp.var(x, axis=0),
            jnp.std(x),
            jnp.nanmax(x),
            jnp.cov(x),
            jnp.corrcoef(x),
            jnp.polyval(x[0], x[1]),
            jnp.convolve(x[0], x[1]),
            jnp.trace(x),
            jnp.kron(x[:2, :2], x[:2, :2]),
            jnp.cross(x[:, :3], x[:, 3:]),
            jax.nn.one_hot(y[0], 5),
            jax.nn.softmax(x),
            jax.nn.log_softmax(x),
            jax.nn.gelu(x),
            jax.nn.gelu(x, approximate=False),
            jax.nn.relu(x),
            jax.nn.silu(x),
            jax.nn.sigmoid(x),
            jax.nn.softplus(x),
            jax.nn.logsumexp(x, axis=1),
            jax.nn.standardize(x),
            jax.nn.elu(x),
            jax.nn.leaky_relu(x),
            jax.nn.glu(x),
            jax.nn.relu6(x),
            jax.nn.hard_tanh(x),
            jax.scipy.special.logsumexp(x),
            jax.scipy.special.gammaln(x),
            jax.scipy.special.xlogy(x, x),
            jax.scipy.special.logit(x),
            jax.scipy.special.ndtri(x),
            jax.scipy.special.ndtr(x),
            jax.scipy.special.i0(x),
            jax.scipy.special.erfinv(x),
            jax.scipy.stats.norm.logpdf(x),
        ]

    yield "shapes", shapes, (S(m, f32), S(m, i32))

    # Dots, contractions and convolutions at every precision and preferred type.
    def dots(x: Any, w: Any, a: Any, q: Any) -> Any:
        out = [
            x @ w,
            jnp.einsum("bi,ij->bj", x, w),
            jnp.dot(x[0], x[0]),
            jnp.tensordot(x, w, 1),
            jnp.matmul(a, a),
            jnp.vdot(x[0], x[0]),
            jnp.inner(x, x),
            jnp.einsum("bij,bjk->bik", a, a),
            lax.dot_general(x, w, (((1,), (0,)), ((), ())), preferred_element_type=jnp.float32),
            jnp.dot(x.astype(jnp.bfloat16), w.astype(jnp.bfloat16)),
            jnp.dot(x.astype(jnp.bfloat16), w.astype(jnp.bfloat16), preferred_element_type=jnp.float32),
            jnp.dot(x.astype(jnp.float16), w.astype(jnp.float16)),
            jnp.dot(q, q.T),
            jnp.dot(q.astype(jnp.int8), q.T.astype(jnp.int8), preferred_element_type=jnp.int32),
            jnp.dot(x.astype(jnp.complex64), w.astype(jnp.complex64)),
            jnp.dot((x > 0), (w > 0)),
            jnp.linalg.norm(x),
            jnp.linalg.norm(x, axis=1),
        ]
        for precision in (
            "default",
            "high",
            "highest",
            "bfloat16",
            "tensorfloat32",
            "float32",
            "bfloat16_3x",
            "float32",
            None,
        ):
            out.append(jnp.dot(x, w, precision=precision))
        for level in (lax.Precision.DEFAULT, lax.Precision.HIGH, lax.Precision.HIGHEST):
            out.append(jnp.matmul(x, w, precision=(level, lax.Precision.DEFAULT)))
            out.append(jnp.einsum("bi,ij->bj", x, w, precision=level))
        img = x.reshape(1, 1, 4, 6)
        ker = w[:3, :3].reshape(1, 1, 3, 3)
        out += [
            lax.conv(img, ker, (1, 1), "SAME"),
            lax.conv_general_dilated(
                img, ker, (2, 1), [(1, 1), (0, 2)], lhs_dilation=(1, 2), rhs_dilation=(2, 1)
            ),
            lax.conv_general_dilated(
                img.transpose(0, 2, 3, 1),
                ker.transpose(2, 3, 1, 0),
                (1, 1),
                "VALID",
                dimension_numbers=("NHWC", "HWIO", "NHWC"),
            ),
            lax.conv_general_dilated(
                jnp.tile(img, (1, 2, 1, 1)),
                jnp.tile(ker, (2, 1, 1, 1)),
                (1, 1),
                "SAME",
                feature_group_count=2,
                precision=lax.Precision.HIGHEST,
            ),
            lax.conv_transpose(
                img, ker.transpose(2, 3, 1, 0), (2, 2), "SAME", dimension_numbers=("NCHW", "HWIO", "NCHW")
            ),
            jax.grad(lambda t: jnp.sum(lax.conv(t, ker, (1, 1), "SAME") ** 2))(img),
            jnp.convolve(x[0], w[0], mode="same"),
            jax.scipy.signal.convolve2d(x, w[:3, :3]),
        ]
        return out

    yield "dots", dots, (S(m, f32), S((6, 5), f32), S((2, 3, 3), f32), S((3, 4), i32))

    def ffts(x: Any, z: Any) -> Any:
        return [
            jnp.fft.fft(x),
            jnp.fft.ifft(z),
            jnp.fft.rfft(x),
            jnp.fft.irfft(z),
            jnp.fft.fft2(z),
            jnp.fft.rfftn(x),
            jnp.fft.irfftn(z),
            jnp.fft.fftshift(x),
            jnp.fft.fftfreq(4),
        ]

    yield "fft", ffts, (S(m, f32), S(m, c64))

    # Control flow: scan, fori, while, cond, switch; checkpointing and custom derivatives.
    def control(x: Any, n: Any, k: Any) -> Any:
        def step(c: Any, t: Any) -> Any:
            c = c * 0.9 + t
            return c, c.sum()

        @jax.custom_jvp
        def soft(t: Any) -> Any:
            return jnp.log1p(jnp.exp(t))

        @soft.defjvp
        def _(primals: Any, tangents: Any) -> Any:
            (t,), (dt,) = primals, tangents
            return soft(t), jax.nn.sigmoid(t) * dt

        @jax.custom_vjp
        def clipped(t: Any) -> Any:
            return t

        clipped.defvjp(lambda t: (t, None), lambda _, g: (jnp.clip(g, -1, 1),))

        return [
            lax.scan(step, x[0], x),
            lax.scan(step, x[0], x, reverse=True, unroll=2),
            lax.fori_loop(0, 3, lambda i, c: c + i * c, x),
            lax.fori_loop(0, n, lambda i, c: c * 2, x),
            lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5), (0, x)),
            lax.cond(n > 2, lambda t: t + 1, lambda t: t * 2, x),
            lax.switch(k, [lambda t: t, lambda t: -t, lambda t: t * t], x),
            jnp.where(n > 0, x, 0),
            jax.checkpoint(lambda t: jnp.sin(jnp.cos(t)).sum())(x),
            jax.grad(jax.checkpoint(lambda t: jnp.sin(jnp.cos(t)).sum()))(x),
            jax.grad(
                jax.remat(
                    lambda t: jnp.sum(jnp.tanh(t) ** 2), policy=jax.checkpoint_policies.nothing_saveable
                )
            )(x),
            jax.grad(lambda t: soft(t).sum())(x),
            jax.grad(lambda t: clipped(t * 2).sum())(x),
            jax.grad(lambda t: lax.scan(step, t[0], t)[1].sum())(x),
            jax.grad(lambda t: lax.fori_loop(0, 3, lambda i, c: jnp.sin(c), t).sum())(x),
            jax.hessian(lambda t: jnp.sum(t**3))(x[0]),
            jax.jvp(lambda t: jnp.exp(t), (x,), (x,)),
            jax.vmap(lambda r: jnp.dot(r, r))(x),
            jax.vmap(lambda r, i: r[i])(x, jnp.zeros(4, jnp.int32) + k),
            jax.lax.map(lambda r: r.sum(), x),
            jax.jit(lambda t: t * 3)(x),
            jax.vjp(lambda t: jnp.sort(t), x[0])[1](x[1]),
            jax.grad(lambda t: jnp.max(t))(x[0]),
            jax.grad(lambda t: jnp.linalg.norm(t))(x),
            lax.cond(n > 2, lambda: (x, n), lambda: (x * 2, n + 1)),
        ]

    yield "control", control, (S(m, f32), S((), i32), S((), i32))

    # Random numbers: legacy uint32 keys and typed key arrays, every common sampler.
    def random(seed: Any, old: Any) -> Any:
        key = jax.random.key(seed)
        a, c = jax.random.split(key)
        out = [
            jax.random.normal(a, (3, 2)),
            jax.random.uniform(c, (4,), minval=-1, maxval=2),
            jax.random.randint(a, (3,), 0, 10),
            jax.random.bernoulli(c, 0.3, (5,)),
            jax.random.categorical(a, jnp.zeros((2, 3))),
            jax.random.permutation(c, 5),
            jax.random.choice(a, 5, (3,), replace=False),
            jax.random.truncated_normal(c, -1, 1, (3,)),
            jax.random.gamma(a, 2.0, (2,)),
            jax.random.beta(c, 2.0, 3.0),
            jax.random.exponential(a, (2,)),
            jax.random.fold_in(key, 3),
            jax.random.key_data(jax.random.split(key, 4)),
            jax.random.bits(a, (3,)),
            jax.random.gumbel(c, (2,)),
            jax.random.poisson(a, 3.0, (2,)),
            jax.random.normal(jax.random.key_data(a) if False else a, (2,), dtype=jnp.bfloat16),
            jax.random.uniform(jax.random.wrap_key_data(jax.random.key_data(c)), (2,)),
            jax.random.normal(old, (3,)),
            jax.random.split(old),
            jax.random.PRNGKey(seed),
            jax.random.dirichlet(a, jnp.ones(3)),
            jax.random.laplace(a, (2,)),
            jax.random.logistic(c, (2,)),
            jax.random.multivariate_normal(a, jnp.zeros(2), jnp.eye(2)),
            jax.random.orthogonal(c, 3),
            jax.random.rademacher(a, (3,)),
            jax.random.t(c, 3.0, (2,)),
            jax.random.cauchy(a, (2,)),
            jax.random.ball(c, 2),
            jax.random.binomial(a, 5, 0.5, (2,)),
        ]
        for impl in ("rbg", "unsafe_rbg"):
            other = jax.random.key(seed, impl=impl)
            out += [jax.random.normal(other, (3,)), jax.random.split(other), jax.random.bits(other, (2,))]
        return out

    yield "random", random, (S((), i32), S((2,), u32))

    # Linear algebra (its custom calls have their own contracts) and the ops around them.
    def linalg(a: Any, b: Any) -> Any:
        spd = a @ a.T + jnp.eye(4)
        return [
            jnp.linalg.svd(a),
            jnp.linalg.svd(a, compute_uv=False),
            jnp.linalg.norm(a, 2),
            jnp.linalg.solve(a, b),
            jnp.linalg.inv(a),
            jnp.linalg.det(a),
            jnp.linalg.slogdet(a),
            jnp.linalg.eigh(spd),
            jnp.linalg.qr(a),
            jnp.linalg.cholesky(spd),
            jnp.linalg.pinv(a),
            jnp.linalg.lstsq(a, b)[0],
            jnp.linalg.eig(a),
            jax.scipy.linalg.solve_triangular(a, b, lower=True),
            jax.scipy.linalg.expm(a),
            jax.scipy.linalg.lu(a),
            jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(spd), b),
            jnp.linalg.matrix_power(a, 3),
            jnp.linalg.matrix_rank(a),
            jax.grad(lambda t: jnp.linalg.det(t))(a),
            jax.grad(lambda t: jnp.linalg.eigh(t @ t.T)[0].sum())(a),
            lax.linalg.tridiagonal_solve(b, b, b, b[:, None]),
            jax.scipy.linalg.schur(a),
            jax.scipy.linalg.hessenberg(a),
            jnp.linalg.eigvalsh(spd),
            jax.grad(lambda t: jnp.linalg.svd(t, compute_uv=False).sum())(a),
            lax.top_k(b, 2),
            jnp.partition(b, 2),
            jnp.argpartition(b, 2),
        ]

    yield "linalg", linalg, (S((4, 4), f32), S((4,), f32))

    def mixed(x: Any, s: Any) -> Any:
        return [
            jnp.asarray(x, jnp.float32) * s,
            x.astype(jnp.int32) + 1,
            (x > 0).sum(),
            jnp.mean(x),
            jnp.square(x).sum(),
            jnp.isclose(x, x),
            jnp.allclose(x, x),
            jnp.array_equal(x, x),
            jnp.count_nonzero(x),
            jnp.nonzero(x, size=2),
            jnp.argwhere(x, size=2),
            jnp.flatnonzero(x, size=2),
            jnp.ptp(x),
            jnp.average(x, weights=x),
            jnp.diff(x),
            jnp.ediff1d(x),
            jnp.cumulative_sum(x),
            jnp.round(x, 2),
            jnp.lexsort((x, x)),
            jnp.nanargmax(x),
            jnp.quantile(x, 0.5),
            jnp.sort_complex(x),
            jnp.unique_counts(x, size=3),
            lax.sort_key_val(x, x.astype(jnp.int32)),
            lax.sort((x, x, x.astype(jnp.int32)), num_keys=2),
            lax.sort(x, is_stable=False),
            lax.sort((x.astype(jnp.int32), x > 0), num_keys=2, is_stable=False),
            jnp.sort(x.astype(jnp.bfloat16)),
            jnp.sort(x.astype(jnp.uint8)),
            jnp.sort(x > 0),
        ]

    yield "mixed f32", mixed, (S((6,), f32), S((), f32))
    yield "mixed bf16", mixed, (S((6,), bf16), S((), bf16))
    yield "mixed i32", mixed, (S((6,), i32), S((), i32))


def mesh_entries() -> Iterator[Entry]:
    """Programs over an abstract (4, 2) mesh of ``MESH_DEVICES`` devices: constraints, reshards,
    ``shard_map`` with every collective, explicit-axis arrays."""
    jax: Any = importlib.import_module("jax")
    jnp: Any = importlib.import_module("jax.numpy")
    lax: Any = importlib.import_module("jax.lax")
    sharding: Any = importlib.import_module("jax.sharding")
    AbstractMesh, AxisType, NamedSharding = sharding.AbstractMesh, sharding.AxisType, sharding.NamedSharding
    P = sharding.PartitionSpec

    S = jax.ShapeDtypeStruct
    f32 = jnp.float32
    auto = AbstractMesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
    explicit = AbstractMesh((4, 2), ("data", "model"), axis_types=(AxisType.Explicit, AxisType.Explicit))

    def constraints(x: Any, w: Any) -> Any:
        y = lax.with_sharding_constraint(x @ w, NamedSharding(auto, P("data", "model")))
        top = lax.with_sharding_constraint(y.max(axis=1), NamedSharding(auto, P("data")))
        return [
            y,
            top,
            lax.with_sharding_constraint(jnp.sort(x, axis=1), NamedSharding(auto, P("data", None))),
        ]

    yield "mesh constraints", constraints, (S((8, 4), f32), S((4, 6), f32))

    def mapped(x: Any, w: Any) -> Any:
        def block(xs: Any, ws: Any) -> Any:
            y = xs @ ws
            return (
                y,
                lax.pmax(jnp.max(y, axis=1), "model"),
                lax.psum(y, "model"),
                lax.pmin(y, "data"),
                lax.pmean(y, ("data", "model")),
                lax.all_gather(y, "model", tiled=True),
                lax.all_gather(y, "data"),
                lax.psum_scatter(y, "model", scatter_dimension=1, tiled=True),
                lax.ppermute(y, "data", [(i, (i + 1) % 4) for i in range(4)]),
                lax.all_to_all(y, "model", 1, 1, tiled=True),
                lax.axis_index("data"),
                lax.psum(y > 0, "model"),
                lax.psum(jnp.ones((), jnp.int32), "data"),
                lax.pmax(y.astype(jnp.int32), "model"),
                lax.pmin(y.astype(jnp.bfloat16), "model"),
                y * 2,
            )

        dm, d = P("data", "model"), P("data")
        outs = (
            dm,
            d,
            dm,
            dm,
            dm,
            P("data", None),
            P(None, "data", "model"),
            dm,
            dm,
            dm,
            P(),
            dm,
            P(),
            dm,
            dm,
            dm,
        )
        return jax.shard_map(
            block, mesh=auto, in_specs=(P("data", None), P(None, "model")), out_specs=outs, check_vma=False
        )(x, w)

    yield "mesh shard_map", mapped, (S((8, 4), f32), S((4, 8), f32))

    def resharded(x: Any, w: Any) -> Any:
        with jax.sharding.use_abstract_mesh(explicit):
            xs = jax.sharding.reshard(x, NamedSharding(explicit, P()))
            y = jax.sharding.reshard(jnp.matmul(xs, w), NamedSharding(explicit, P("data", "model")))
            top = jax.sharding.reshard(jnp.max(y, axis=1), NamedSharding(explicit, P("data")))
            return [y, top, jnp.sum(y, axis=0), y * 2 + jnp.tanh(y)]

    yield "mesh reshard", resharded, (S((8, 4), f32), S((4, 6), f32))


def _avals(function: Callable[..., Any], specs: tuple[Any, ...]) -> Any:
    import jax

    return jax.jit(function).trace(*specs).jaxpr


def load_table(path: Path = TABLE) -> Table:
    """The committed table when it was derived from this JAX, else one derived now (seconds)."""
    import jax

    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = None
    if data is None or data.get("jax") != jax.__version__:
        data = derive()
    return Table.from_json(data)


def derive() -> dict[str, Any]:
    """The op table of this JAX: lower every corpus program and read what its ops carry."""
    import jax

    from sandbox.inside.lowering import Lowerer

    collected = Collected()
    failures: list[str] = []
    for devices, source in ((1, entries), (MESH_DEVICES, mesh_entries)):
        lower = Lowerer(devices)
        for name, function, specs in source():
            try:
                data = lower(_avals(function, specs))
            except Exception as exc:  # a corpus program this JAX cannot lower is a corpus bug: named
                failures.append(f"{name}: {type(exc).__name__}: {str(exc)[:300]}")
                continue
            collect(data, collected)
    if failures:
        raise RuntimeError("corpus programs JAX could not lower:\n" + "\n".join(failures))
    return collected.table(jax.__version__)


def main() -> None:
    parser = argparse.ArgumentParser(prog="sandbox.inside.op_corpus")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="derive the table and write op_table.json")
    group.add_argument(
        "--check", action="store_true", help="derive the table and compare it with op_table.json"
    )
    group.add_argument("--print", action="store_true", help="derive the table and print it")
    opts = parser.parse_args()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    table = derive()
    text = json.dumps(table, indent=1, sort_keys=True) + "\n"
    if opts.write:
        TABLE.write_text(text)
    elif opts.print:
        sys.stdout.write(text)
    else:
        same = TABLE.exists() and TABLE.read_text() == text
        sys.stdout.write("the op table is JAX's\n" if same else "the op table differs from JAX's lowering\n")
        sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
