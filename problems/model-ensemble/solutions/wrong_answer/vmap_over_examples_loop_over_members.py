"""Mistake: vmap over the examples, a Python loop over the members

The network is vmapped over the rows of x, but the members are taken one by one in a Python
comprehension, which jax.jit unrolls into one copy of the network per member: right values, and a program
that grows with the ensemble. Map over the members instead: jax.vmap(predict, in_axes=(0, None)).
"""
import jax
import jax.numpy as jnp


def _one_example(member, xi):
    return jax.nn.relu(xi @ member["w1"] + member["b1"]) @ member["w2"] + member["b2"]


def ensemble_predict(params, x):
    members = params["w1"].shape[0]
    rows = jax.vmap(_one_example, in_axes=(None, 0))
    return jnp.stack([rows(jax.tree.map(lambda leaf: leaf[e], params), x) for e in range(members)])
