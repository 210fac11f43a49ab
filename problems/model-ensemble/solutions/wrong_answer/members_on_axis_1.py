"""Mistake: Stacks the members along axis 1

out_axes=1 gives shape (n, E, k). The member axis comes first, (E, n, k): keep vmap's default out_axes=0.
"""
import jax


def _predict(member, x):
    return jax.nn.relu(x @ member["w1"] + member["b1"]) @ member["w2"] + member["b2"]


def ensemble_predict(params, x):
    return jax.vmap(_predict, in_axes=(0, None), out_axes=1)(params, x)
