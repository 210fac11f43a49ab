# Trace error: the member count taken from a traced value (int() of a sum), not from the static shape.
import jax
import jax.numpy as jnp


def ensemble_predict(params, x):
    members = int(jnp.sum(jnp.ones_like(params["b2"][:, 0])))
    outs = [jax.nn.relu(x @ params["w1"][e] + params["b1"][e]) @ params["w2"][e] + params["b2"][e] for e in range(members)]
    return jnp.stack(outs)
