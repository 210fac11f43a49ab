"""Sharded outputs compared: each output leaf must live on the devices where the reference's does.

For a problem of more than one device (``[sandbox] devices``), the executor reports each output's layout as
the compiled executable places it (``sandbox.shared.layouts``; never what the tracer claims), the tracer's
skeleton places them in the output tree like the values, and each leaf's layout must equal the layout of
the reference's leaf at the same path (``judge.core.mesh_reference``). A difference is a ``wrong_answer``
(reason ``sharding``) that names the leaf and both layouts in the words of the problem's mesh:
``output["w"]: sharded over ('x',) on axis 0, expected replicated``. Layouts are structure, never values,
so hidden cases tell the same. Pure: no JAX.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judge.core.compare import format_path
from judge.core.mesh_reference import leaf_paths, path_entries
from judge.core.output_tree import assemble  # the same placing of outputs as the values'
from judge.core.spec import SandboxSpec
from sandbox.session.reports import OutputLayout
from sandbox.shared.layouts import BadLayout, Mesh, describe, from_parts, from_wire
from sandbox.shared.wire import ProtocolError


@dataclass(frozen=True)
class Misplaced:
    """Why the output's placement is not the reference's: ``internal`` when the judge's own side failed."""

    message: str
    internal: bool = False


class _Slot:
    """Stands for one program output while the skeleton is laid over the executor's layouts."""

    def __init__(self, index: int) -> None:
        self.index = index


def mesh_of(sandbox: SandboxSpec) -> Mesh | None:
    if sandbox.mesh is None:
        return None
    return Mesh(tuple(sandbox.mesh.axes), tuple(sandbox.mesh.shape))


def misplaced(
    expected: Mapping[str, Any],
    skeleton: Any,
    reported: Sequence[OutputLayout] | None,
    got: Any,
    sandbox: SandboxSpec,
    root_names: Sequence[str] = (),
) -> Misplaced | None:
    """The first leaf (in the reference's order) whose layout differs from the reference's, or None.

    ``expected``: the reference's layouts by leaf path; ``reported``: the executor's layout per program
    output (untrusted bytes: checked here); ``got``: the learner's output tree (values), already found equal
    in structure to the reference's."""
    if reported is None:
        return Misplaced("the executor reported no output shardings", internal=True)
    try:
        placeholders: list[Any] = [_Slot(i) for i in range(len(reported))]
        slots = assemble(skeleton, placeholders, 1 << 62)
    except ProtocolError as exc:
        return Misplaced(f"the output shardings could not be placed: {exc}", internal=True)
    where = dict(leaf_paths(slots))
    values = dict(leaf_paths(got))
    mesh = mesh_of(sandbox)
    devices = sandbox.devices
    for key, wanted in expected.items():
        slot, value = where.get(key), values.get(key)
        if not isinstance(slot, _Slot) or value is None:
            return Misplaced(f"the output has no leaf at {key} to compare shardings with", internal=True)
        ndim = len(getattr(value, "shape", ()))
        try:
            want = from_wire(wanted, ndim, devices)
        except BadLayout as exc:
            return Misplaced(f"the reference's sharding at {key} cannot be read: {exc}", internal=True)
        try:
            layout = reported[slot.index]
            have = from_parts(layout.tiles, layout.groups, ndim, devices)
        except BadLayout as exc:
            return Misplaced(f"the executor's sharding at {key} cannot be read: {exc}", internal=True)
        if have != want:
            path = format_path(path_entries(key), root_names)
            return Misplaced(f"{path}: {describe(have, mesh)}, expected {describe(want, mesh)}")
    return None
