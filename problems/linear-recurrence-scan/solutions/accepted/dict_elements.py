"""The elements as a dict pytree, combined with jnp.multiply and jnp.add."""
import jax
import jax.numpy as jnp


def linear_recurrence(a, b):
    def combine(earlier, later):
        return {
            "scale": jnp.multiply(later["scale"], earlier["scale"]),
            "shift": jnp.add(jnp.multiply(later["scale"], earlier["shift"]), later["shift"]),
        }

    return jax.lax.associative_scan(combine, {"scale": a, "shift": b})["shift"]
