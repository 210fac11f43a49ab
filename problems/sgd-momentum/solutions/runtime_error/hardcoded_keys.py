# Runtime error: hard-codes the keys "w" and "b" of example 1, so example 2 raises KeyError.
def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    new_params, new_velocity = {}, {}
    for key in ("w", "b"):
        new_velocity[key] = momentum * velocity[key] + grads[key]
        new_params[key] = params[key] - learning_rate * new_velocity[key]
    return new_params, new_velocity
