# Compile error: loss_and_grad is bound to the result of jax.value_and_grad's import, a module attribute
# that is not the function asked for (a tuple here), so it cannot be called.
import jax

loss_and_grad = (jax.value_and_grad, None)
