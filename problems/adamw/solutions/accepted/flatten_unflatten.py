# Flattens the four trees, loops over the leaf lists in Python, and unflattens three results.
import jax
import jax.numpy as jnp


def adamw(params, grads, mu, nu, step, learning_rate, weight_decay):
    leaves, treedef = jax.tree_util.tree_flatten(params)
    gs, ms, vs = (jax.tree_util.tree_leaves(t) for t in (grads, mu, nu))
    t = jnp.asarray(step, jnp.float32) + 1
    bias1 = 1 - jnp.power(0.9, t)
    bias2 = 1 - jnp.power(0.999, t)
    out_p, out_m, out_v = [], [], []
    for p, g, m, v in zip(leaves, gs, ms, vs):
        g = g.astype(jnp.float32)
        m_new = 0.9 * m.astype(jnp.float32) + 0.1 * g
        v_new = 0.999 * v.astype(jnp.float32) + 0.001 * g * g
        p32 = p.astype(jnp.float32)
        p_new = p32 - learning_rate * (m_new / bias1 / (jnp.sqrt(v_new / bias2) + 1e-8) + weight_decay * p32)
        out_p.append(p_new.astype(p.dtype))
        out_m.append(m_new.astype(p.dtype))
        out_v.append(v_new.astype(p.dtype))
    unflatten = jax.tree_util.tree_unflatten
    return unflatten(treedef, out_p), unflatten(treedef, out_m), unflatten(treedef, out_v)
