"""The catalog's device-mesh-sharding statement says where each output lives; the reference must agree.

The statement tells the learner that the mesh's position (i, j) is device 2i + j, that device 2i + j holds
the block of y of rows iB..(i+1)B-1 and columns jH..(j+1)H-1, and that devices 2i and 2i + 1 both hold rows
iB..(i+1)B-1 of top. The judge compares learners' outputs with the reference's layouts, so those words are
only true while the reference (run on 8 CPU devices as the judge runs it, ``judge.core.mesh_reference``)
places its outputs exactly so. No sandbox: the reference is trusted code.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from judge.core.errors import ReferenceFailure
from judge.core.mesh_reference import run
from judge.core.problems import Problem, load_problem
from judge.core.shardings import mesh_of
from sandbox.shared.layouts import describe, from_wire

PROBLEM = Path(__file__).resolve().parents[1] / "problems" / "device-mesh-sharding"


@pytest.fixture(scope="module")
def problem() -> Problem:
    return load_problem(PROBLEM)


def test_the_statement_describes_the_mesh_the_problem_declares(problem: Problem) -> None:
    sandbox = problem.spec.sandbox
    assert sandbox.devices == 8
    assert sandbox.mesh is not None
    assert (sandbox.mesh.axes, sandbox.mesh.shape) == (["data", "model"], [4, 2])
    text = (PROBLEM / "statement.md").read_text()
    assert "$(4, 2)$ with axes `data` (4 devices) and `model` (2 devices)" in text
    assert 'is sharded `P("data", "model")`' in text and 'is sharded `P("data")`' in text


def test_the_reference_places_each_block_where_the_statement_says(problem: Problem) -> None:
    results = run(problem, problem.public_cases)
    mesh = mesh_of(problem.spec.sandbox)
    for case, result in zip(problem.public_cases, results, strict=True):
        assert not isinstance(result, ReferenceFailure), result
        output, layouts = result
        x, w = case.inputs
        np.testing.assert_array_equal(output["y"], np.asarray(x) @ np.asarray(w))
        y = from_wire(layouts['["y"]'], 2, 8)
        top = from_wire(layouts['["top"]'], 1, 8)
        # Tiles in row-major order: tile (i, j) of y on device 2i + j alone; tile i of top on 2i and 2i + 1.
        assert y.tiles == (4, 2) and y.groups == tuple((2 * i + j,) for i in range(4) for j in range(2))
        assert top.tiles == (4,) and top.groups == tuple((2 * i, 2 * i + 1) for i in range(4))
        assert describe(y, mesh) == "sharded over ('data',) on axis 0 and ('model',) on axis 1"
        assert describe(top, mesh) == "sharded over ('data',) on axis 0"
