# Compile error: the function is named ensemble_forward, not ensemble_predict.
import jax


def _predict(member, x):
    return jax.nn.relu(x @ member["w1"] + member["b1"]) @ member["w2"] + member["b2"]


def ensemble_forward(params, x):
    return jax.vmap(_predict, in_axes=(0, None))(params, x)
