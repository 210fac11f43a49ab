"""Mistake: Leaves out the ReLU

Without the nonlinearity each member is one linear map, and negative hidden units leak through. Apply
jax.nn.relu (or jnp.maximum(., 0)) to the first layer's output.
"""
import jax


def _predict(member, x):
    return (x @ member["w1"] + member["b1"]) @ member["w2"] + member["b2"]


def ensemble_predict(params, x):
    return jax.vmap(_predict, in_axes=(0, None))(params, x)
