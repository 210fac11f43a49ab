"""Mistake: Mutates params in place

Writes the new leaves into the params and velocity containers it was given; values are
right.
"""
def _update_in_place(p, g, v, lr, mu):
    keys = list(p.keys()) if isinstance(p, dict) else range(len(p))
    for k in keys:
        if isinstance(p[k], (dict, list)):
            _update_in_place(p[k], g[k], v[k], lr, mu)
        else:
            v[k] = mu * v[k] + g[k]
            p[k] = p[k] - lr * v[k]


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    if not isinstance(params, (dict, list)):  # a bare array cannot be changed in place
        new_v = momentum * velocity + grads
        return params - learning_rate * new_v, new_v
    _update_in_place(params, grads, velocity, learning_rate, momentum)
    return params, velocity
