# Time limit: a jax.lax.while_loop over the members whose counter never advances, so it never finishes.
import jax
import jax.numpy as jnp


def ensemble_predict(params, x):
    members, k = params["b2"].shape

    def body(state):
        e, out = state
        member = jax.tree.map(lambda leaf: leaf[e], params)
        row = jax.nn.relu(x @ member["w1"] + member["b1"]) @ member["w2"] + member["b2"]
        return e, out.at[e].set(row)

    start = (jnp.int32(0), jnp.zeros((members, x.shape[0], k), x.dtype))
    _, out = jax.lax.while_loop(lambda state: state[0] < members, body, start)
    return out
