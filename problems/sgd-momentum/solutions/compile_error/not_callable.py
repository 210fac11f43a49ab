# Compile error: sgd_momentum is bound to a float (a hyperparameter), not a function.
sgd_momentum = 0.9
