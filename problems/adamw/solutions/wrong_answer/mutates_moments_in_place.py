"""Mistake: Mutates moments in place

Writes the new moments into the mu and nu dicts it was given (and returns those same containers).
"""
import jax
import jax.numpy as jnp


def _set_leaves(tree, values):
    leaves = iter(values)

    def walk(node):
        keys = sorted(node) if isinstance(node, dict) else range(len(node))
        for k in keys:
            if isinstance(node[k], (dict, list)):
                walk(node[k])
            else:
                node[k] = next(leaves)

    if isinstance(tree, (dict, list)):
        walk(tree)
        return tree
    return next(leaves)


def adamw(params, grads, mu, nu, step, learning_rate, weight_decay):
    t = step.astype(jnp.float32) + 1.0
    c1, c2 = 1.0 - 0.9**t, 1.0 - 0.999**t
    f = lambda x: x.astype(jnp.float32)  # noqa: E731
    m2 = jax.tree.map(lambda m, g: 0.9 * f(m) + 0.1 * f(g), mu, grads)
    v2 = jax.tree.map(lambda v, g: 0.999 * f(v) + 0.001 * f(g) ** 2, nu, grads)
    new_params = jax.tree.map(
        lambda p, m, v: (f(p) - learning_rate * ((m / c1) / (jnp.sqrt(v / c2) + 1e-8) + weight_decay * f(p))).astype(
            p.dtype
        ),
        params,
        m2,
        v2,
    )
    ms = [m.astype(p.dtype) for m, p in zip(jax.tree.leaves(m2), jax.tree.leaves(params))]
    vs = [v.astype(p.dtype) for v, p in zip(jax.tree.leaves(v2), jax.tree.leaves(params))]
    return new_params, _set_leaves(mu, ms), _set_leaves(nu, vs)
