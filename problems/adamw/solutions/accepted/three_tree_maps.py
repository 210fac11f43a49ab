# Moments first, then the parameters from the new moments; float32 inside, cast back per leaf.
import jax
import jax.numpy as jnp

B1, B2, EPS = 0.9, 0.999, 1e-8


def adamw(params, grads, mu, nu, step, learning_rate, weight_decay):
    t = step.astype(jnp.float32) + 1.0
    c1, c2 = 1.0 - B1**t, 1.0 - B2**t
    f32 = lambda x: x.astype(jnp.float32)  # noqa: E731
    m32 = jax.tree.map(lambda m, g: B1 * f32(m) + (1 - B1) * f32(g), mu, grads)
    v32 = jax.tree.map(lambda v, g: B2 * f32(v) + (1 - B2) * jnp.square(f32(g)), nu, grads)

    def step_one(p, m, v):
        direction = (m / c1) / (jnp.sqrt(v / c2) + EPS)
        return (f32(p) - learning_rate * (direction + weight_decay * f32(p))).astype(p.dtype)

    new_params = jax.tree.map(step_one, params, m32, v32)
    new_mu = jax.tree.map(lambda m, ref: m.astype(ref.dtype), m32, params)
    new_nu = jax.tree.map(lambda v, ref: v.astype(ref.dtype), v32, params)
    return new_params, new_mu, new_nu
