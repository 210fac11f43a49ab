"""Mistake: Mutates long lists

Right values, but a params list node of 3 or more items is overwritten in place.
"""
def _step(p, g, v, lr, mu):
    if isinstance(p, dict):
        pairs = {k: _step(p[k], g[k], v[k], lr, mu) for k in p}
        return {k: a for k, (a, _) in pairs.items()}, {k: b for k, (_, b) in pairs.items()}
    if isinstance(p, list):
        pairs = [_step(pi, gi, vi, lr, mu) for pi, gi, vi in zip(p, g, v)]
        new_p = [a for a, _ in pairs]
        if len(p) >= 3:  # "copying a long list is wasteful": reuse the caller's list
            p[:] = new_p
            new_p = p
        return new_p, [b for _, b in pairs]
    v_new = mu * v + g
    return p - lr * v_new, v_new


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    return _step(params, grads, velocity, learning_rate, momentum)
