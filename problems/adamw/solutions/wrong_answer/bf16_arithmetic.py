"""Mistake: Bfloat16 arithmetic

Does all the arithmetic in the leaf dtype (bfloat16 for bfloat16 trees) instead of in float32.
"""
import jax
import jax.numpy as jnp

B1, B2, EPS = 0.9, 0.999, 1e-8


def adamw(params, grads, mu, nu, step, learning_rate, weight_decay):
    t = step.astype(jnp.float32) + 1.0
    c1, c2 = 1.0 - B1**t, 1.0 - B2**t

    def one(p, g, m, v):
        dt = p.dtype
        m2 = (B1 * m + (1 - B1) * g).astype(dt)
        v2 = (B2 * v + (1 - B2) * g * g).astype(dt)
        m_hat = (m2 / c1.astype(dt)).astype(dt)
        v_hat = (v2 / c2.astype(dt)).astype(dt)
        # For bfloat16 leaves u + weight_decay * p is rounded to bfloat16, which ruins p - lr * (...)
        # when it nearly cancels.
        p2 = p - learning_rate * (m_hat / (jnp.sqrt(v_hat) + EPS) + weight_decay * p)
        return p2.astype(dt), m2, v2

    out = jax.tree.map(one, params, grads, mu, nu)
    is_result = lambda x: isinstance(x, tuple)  # noqa: E731
    return tuple(jax.tree.map(lambda o: o[i], out, is_leaf=is_result) for i in range(3))
