"""The functions a case of hessian-vector-product may pass as ``f`` (problem code: it runs in the sandbox).

Each maps a pytree of float arrays to a float32 scalar, works for any structure and dtype (it computes in
float32), and is smooth, so its Hessian exists everywhere.
"""

import jax
import jax.numpy as jnp


def _leaves(x):
    return [leaf.astype(jnp.float32) for leaf in jax.tree.leaves(x)]


def quartic(x):
    """sum over every entry of x**4 / 4: a diagonal Hessian, 3 * x**2."""
    return sum(jnp.sum(leaf**4) for leaf in _leaves(x)) / 4.0


def coupled_cosine(x):
    """sum of cos(x) plus half the square of the sum of all entries: every entry coupled to every other."""
    total = sum(jnp.sum(leaf) for leaf in _leaves(x))
    return sum(jnp.sum(jnp.cos(leaf)) for leaf in _leaves(x)) + 0.5 * total**2


def log_sum_exp(x):
    """log of the sum of exp over every entry of every leaf (a softmax-weighted Hessian)."""
    flat = jnp.concatenate([leaf.ravel() for leaf in _leaves(x)])
    return jax.nn.logsumexp(flat)


def soft_norm(x):
    """sqrt(1 + sum of squares): the Hessian mixes a scaled identity with a rank-one term."""
    return jnp.sqrt(1.0 + sum(jnp.sum(leaf * leaf) for leaf in _leaves(x)))
