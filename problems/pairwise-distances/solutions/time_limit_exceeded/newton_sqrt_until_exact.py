# Time limit: a hand-written Newton square root run "until it stops changing"; at s = 0 (identical
# points) the first step is 0/0 = nan, and nan != nan, so the loop never ends.
import jax
import jax.numpy as jnp


def newton_sqrt(s):
    def cond(state):
        r, prev = state
        return r != prev

    def body(state):
        r, _ = state
        return 0.5 * (r + s / r), r

    r, _ = jax.lax.while_loop(cond, body, (0.5 * (s + 1.0), s))
    return r


def pairwise_distances(x, y):
    def dist(a, b):
        d = a.astype(jnp.float32) - b.astype(jnp.float32)
        return newton_sqrt(jnp.sum(d * d))

    return jax.vmap(jax.vmap(dist, in_axes=(None, 0)), in_axes=(0, None))(x, y).astype(x.dtype)
