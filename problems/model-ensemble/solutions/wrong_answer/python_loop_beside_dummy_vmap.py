"""Mistake: A Python loop over the members, with a vmap beside it

The values are right, but the loop is unrolled into one copy of the network per member (the jax.vmap of
an unrelated function changes nothing), which this problem refuses. Map the one-member network over the
members instead: jax.vmap(predict, in_axes=(0, None))(params, x).
"""
import jax
import jax.numpy as jnp


def _predict(member, x):
    return jax.nn.relu(x @ member["w1"] + member["b1"]) @ member["w2"] + member["b2"]


def ensemble_predict(params, x):
    _ = jax.vmap(lambda b: b * 0.0)(params["b2"])
    members = params["w1"].shape[0]
    outputs = [_predict(jax.tree.map(lambda leaf: leaf[e], params), x) for e in range(members)]
    return jnp.stack(outputs)
