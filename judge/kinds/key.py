"""``key``: a typed PRNG key array (``jax.random.key``) of the problem's ``impl``, with a rank in ``ndim``
(default ``[0]``: one key). JSON ``{"key": seed}`` (what ``jax.random.key(seed)`` makes; a bare integer means
the same) or ``{"key_data": [...]}`` (raw uint32 key data, ``jax.random.key_data``); for a batch of keys
``{"key": [seed, ...]}`` or ``{"key_data": [[...], ...]}``. Always traced: the program receives the key's
uint32 data and the function the key wrapped again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judge.core.pytree_json import json_to_key
from judge.kinds.base import Arg, Decl, Kind, Wire
from judge.kinds.template import UINT32_MAX


class KeyKind(Kind):
    name = "key"
    panel_layout = "untagged"
    api_text = (
        "a typed PRNG key array of `key_impl` with a rank in `ndim`, written "
        '{"key": seed} or {"key_data": [...]}'
    )
    fields = frozenset({"ndim", "impl"})
    panel_dtype = "int"
    coverage = "key"
    random_source = True
    statement_order = 40

    def accepts(self, arg: Arg) -> tuple[str, ...]:
        return ("object", "integer") if arg.key_ranks == [0] else ("object",)

    def describe(self, arg: Arg) -> str:
        ranks = arg.key_ranks
        if ranks == [0]:
            return f"a typed PRNG key (jax.random.key, {arg.impl})"
        listed = " or ".join(str(n) for n in ranks)
        return f"a typed PRNG key array ({arg.impl}) with {listed} dimension{'' if ranks == [1] else 's'}"

    def ranks(self, arg: Arg) -> list[int]:
        return arg.key_ranks

    def from_json(self, arg: Arg, value: Any, dtype: str, root: str) -> Any:
        return json_to_key(value, root=root, impl=arg.impl, ndim=arg.key_ranks)

    def wire(self, arg: Arg, value: Any) -> Wire:
        # A typed key crosses as its uint32 data; the tracer wraps it again with the problem's impl.
        return {"key": {"impl": value.impl, "shape": list(value.shape)}}, [value.data]

    def panel_hint(self, ndim: Sequence[int], accepts: Sequence[str]) -> str:
        if list(ndim) == [0]:
            return 'a seed, {"key": seed} or {"key_data": [uint32, ...]}'
        return '{"key": [seed, ...]} or {"key_data": [[uint32, ...], ...]}'

    def statement_notes(self, arg: Arg, same_kind: Sequence[Arg]) -> list[str]:
        what = "a typed PRNG key" if arg.key_ranks == [0] else "a typed PRNG key array"
        return [
            f"`{arg.name}` arrives traced as {what} (`jax.random.key`, {arg.impl}): use it with "
            f"`jax.random` as it is (`jax.random.split({arg.name})`, `jax.random.normal({arg.name}, "
            "shape)`). It is a new-style typed key, not a legacy `jax.random.PRNGKey` uint32 array: "
            f"`jax.random.key_data({arg.name})` is its raw data, and `jax.random.wrap_key_data` makes a "
            'key of data again. On the Run panel `{"key": 42}` (or `42`) is `jax.random.key(42)`, and '
            '`{"key_data": [0, 42]}` the key with that raw data.'
        ]

    def scaffold_spec(self, decl: Decl) -> dict[str, Any]:
        return {"ndim": [0]}

    def scaffold_toml(self, decl: Decl) -> list[str]:
        return ['impl = "threefry2x32"', "ndim = [0]"]

    def scaffold_description(self, decl: Decl) -> str:
        return "A typed PRNG key (jax.random.key, threefry2x32), traced."

    def scaffold_constraint(self, decl: Decl) -> str:
        return (
            f"- `{decl.name}` is one typed PRNG key (threefry2x32) with any key data; in the Run panel "
            f'`{{"key": seed}}`\n  or `{{"key_data": [w0, w1]}}` with two uint32 words.'
        )

    def scaffold_junk(self, decl: Decl) -> list[tuple[str, object]]:
        n = decl.name
        return [
            (f"{n} a fractional seed", {"key": 1.5}),
            (f"{n} key data of 3 words", {"key_data": [1, 2, 3]}),
            (f"{n} a seed past 2**32 - 1", {"key": 2**32}),
        ]

    def scaffold_edge(self, decl: Decl, low: bool) -> object:
        return {"key": 0} if low else {"key_data": [UINT32_MAX, UINT32_MAX]}

    def scaffold_example(self, decl: Decl, index: int) -> object:
        return {"key": 42 + index}
