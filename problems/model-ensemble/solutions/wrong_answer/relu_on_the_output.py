"""Mistake: ReLU on the output layer too

Applies the ReLU after the second layer as well, so no prediction can be negative. Only the hidden layer
has the ReLU; the output layer is linear.
"""
import jax


def _predict(member, x):
    hidden = jax.nn.relu(x @ member["w1"] + member["b1"])
    return jax.nn.relu(hidden @ member["w2"] + member["b2"])


def ensemble_predict(params, x):
    return jax.vmap(_predict, in_axes=(0, None))(params, x)
