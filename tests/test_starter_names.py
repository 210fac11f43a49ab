"""A starter imports what it uses and what its comments and hints tell the learner to use
(``judge.authoring.starter_names``, reported by ``judge check``'s starter check): checked here on the
functions and on every problem of the repository and of the test fixtures."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from judge.authoring.starter_names import Unimported, unimported

ROOT = Path(__file__).resolve().parent.parent
STARTERS = sorted([*ROOT.glob("problems/*/starter.py"), *ROOT.glob("tests/fixtures/problems/*/starter.py")])


def test_a_name_the_code_reads_and_nothing_binds() -> None:
    code = 'import jax.numpy as jnp\n\n\ndef f(x):\n    """Runs in jax.jit."""\n    return jax.nn.relu(x)\n'
    assert unimported(code) == [Unimported("jax", "line 6", "jax", 6, in_code=True)]
    # Builtins, locals, closures, arguments, comprehension names and module dunders are bound.
    fine = (
        "import jax\n\n\ndef f(x, *rest):\n    n = len(rest)\n    g = lambda y: y * n\n"
        "    return [g(v) for v in jax.tree.leaves(x)], __name__\n"
    )
    assert unimported(fine) == []


def test_a_module_a_comment_or_a_hint_tells_the_learner_to_use() -> None:
    code = "import jax.numpy as jnp\n\n\ndef f(x):\n    # Your code: a jax.lax.fori_loop.\n    return x\n"
    assert unimported(code) == [Unimported("jax", "line 5", "jax.lax.fori_loop", 5)]
    hints = ["Plain words name jax.nn but not in code.", "Use `jax.random.split(key, 3)`, then `jnp.where`."]
    plain = "import jax.numpy as jnp\n\n\ndef f(key, x):\n    return x\n"
    assert unimported(plain, hints) == [Unimported("jax", "hint 2", "jax.random.split")]
    # jax.jit says how the judge calls the function: no import asked for.
    assert unimported(plain, ["It runs under `jax.jit`."]) == []
    both = "import jax\nimport jax.numpy as jnp\n\n\ndef f(x):\n    # jax.lax.scan here\n    return x\n"
    assert unimported(both, hints) == []


@pytest.mark.parametrize("starter", STARTERS, ids=lambda path: path.parent.name)
def test_every_starter_imports_what_it_and_its_hints_use(starter: Path) -> None:
    hints = tomllib.loads((starter.parent / "problem.toml").read_text()).get("hints", [])
    assert unimported(starter.read_text(), hints) == []
