"""Mistake: jax.lax.map over the members

lax.map runs the network for one member after another in a loop (a scan), so the values are right but the
members are not computed as one batched program, which this problem asks for. jax.vmap with
in_axes=(0, None) computes them all at once.
"""
import jax


def _predict(member, x):
    return jax.nn.relu(x @ member["w1"] + member["b1"]) @ member["w2"] + member["b2"]


def ensemble_predict(params, x):
    return jax.lax.map(lambda member: _predict(member, x), params)
