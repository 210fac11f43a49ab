# Accepted: a hand-written recursion over dicts and lists that builds fresh containers.
def _step(p, g, v, lr, mu):
    if isinstance(p, dict):
        pairs = {k: _step(p[k], g[k], v[k], lr, mu) for k in p}
        return {k: a for k, (a, _) in pairs.items()}, {k: b for k, (_, b) in pairs.items()}
    if isinstance(p, list):
        pairs = [_step(pi, gi, vi, lr, mu) for pi, gi, vi in zip(p, g, v)]
        return [a for a, _ in pairs], [b for _, b in pairs]
    v_new = mu * v + g
    return p - lr * v_new, v_new


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    return _step(params, grads, velocity, learning_rate, momentum)
