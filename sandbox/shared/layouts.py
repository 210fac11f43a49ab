"""Where an array's pieces live on a device mesh, as plain data: the layouts compared for sharded outputs.

A ``Layout`` says how an array of rank ``ndim`` is split over the devices of a job: ``tiles[d]`` pieces
along dimension ``d`` (row-major tile order), and for each tile the sorted ids of the devices that hold it
(more than one: the tile is replicated over them). Two arrays with the same layout have every element on the
same devices, whatever the sharding was called: ``NamedSharding(mesh, P('x'))`` over a mesh of devices 0-7 in
order and XLA's ``{devices=[8,1]<=[8]}`` are one layout. Replicated is one tile held by every device.

The executor builds layouts from the compiled program's output shardings (``from_tiles``), the judge from the
reference's outputs, and the judge words them against the problem's declared mesh (``describe``). Pure
standard library: the programs inside the sandbox import it as they import ``sandbox.shared.wire``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Most devices a layout may name (a layout from the wire is checked against it before use).
MAX_DEVICES = 4096


@dataclass(frozen=True)
class Layout:
    tiles: tuple[int, ...]
    #: Per tile (row-major over ``tiles``), the sorted device ids holding it.
    groups: tuple[tuple[int, ...], ...]

    def wire(self) -> dict[str, Any]:
        return {"tiles": list(self.tiles), "groups": [list(g) for g in self.groups]}

    @property
    def replicated(self) -> bool:
        return len(self.groups) == 1 and all(t == 1 for t in self.tiles)


class BadLayout(ValueError):
    """A layout that is not one (from the wire, or a sharding this module cannot read)."""


def replicated(ndim: int, devices: int) -> Layout:
    return Layout((1,) * ndim, (tuple(range(devices)),))


def from_tiles(
    ndim: int, dims: Sequence[int], devices: Sequence[int], replicate_last: bool, total: int
) -> Layout:
    """A layout from XLA's tile assignment: ``dims`` (``ndim`` tile counts, plus one replication dimension
    when ``replicate_last``) over ``devices`` (row-major), every one of the job's ``total`` devices used."""
    dims = [int(d) for d in dims]
    devices = [int(d) for d in devices]
    if len(dims) != ndim + (1 if replicate_last else 0) or any(d < 1 for d in dims):
        raise BadLayout(f"tile dimensions {dims} do not fit an array of rank {ndim}")
    if math.prod(dims) != len(devices) or sorted(devices) != list(range(total)):
        raise BadLayout(f"the tiles {dims} do not place each of the {total} devices once")
    replicas = dims[-1] if replicate_last else 1
    groups = tuple(tuple(sorted(devices[i : i + replicas])) for i in range(0, len(devices), replicas))
    return Layout(tuple(dims[:ndim]), groups)


def from_hlo(hlo: Any, ndim: int, total: int) -> Layout:
    """A layout from an XLA ``HloSharding`` (jaxlib's: a compiled executable's output sharding, or a JAX
    array's ``sharding._to_xla_hlo_sharding(ndim)``) of an array of rank ``ndim`` over ``total`` devices.
    Only its methods are used: no import of JAX here."""
    if hlo.is_replicated():
        return replicated(ndim, total)
    if hlo.is_maximal() or hlo.is_manual() or (hlo.subgroup_types() and not hlo.replicate_on_last_tile_dim()):
        raise BadLayout(f"{hlo} is not a tiling of the array")
    return from_tiles(
        ndim,
        hlo.tile_assignment_dimensions(),
        hlo.tile_assignment_devices(),
        hlo.replicate_on_last_tile_dim(),
        total,
    )


def from_wire(node: Any, ndim: int, total: int) -> Layout:
    """A layout the executor sent, checked: ``ndim`` tile counts, groups that place every device once."""
    if not isinstance(node, dict) or not isinstance(node.get("tiles"), list):
        raise BadLayout("a layout is an object with tiles and groups")
    groups = node.get("groups")
    return from_parts(node["tiles"], groups if not isinstance(groups, list) else tuple(groups), ndim, total)


def from_parts(tiles: Sequence[object], groups: object, ndim: int, total: int) -> Layout:
    """A layout from its tile counts and device groups (``from_wire``, or a layout the monitor kept:
    ``sandbox.session.reports.OutputLayout``), checked the same way."""
    counts = [t for t in tiles if isinstance(t, int) and 1 <= t <= MAX_DEVICES]
    if len(tiles) != ndim or len(counts) != len(tiles):
        raise BadLayout(f"a layout of rank {len(tiles)} for an array of rank {ndim}")
    if not isinstance(groups, tuple) or len(groups) != math.prod(counts):
        raise BadLayout("a layout needs one device group per tile")
    flat: list[int] = []
    out: list[tuple[int, ...]] = []
    for group in groups:
        if not isinstance(group, list) or not all(isinstance(d, int) for d in group):
            raise BadLayout("a device group is a list of device ids")
        out.append(tuple(sorted(group)))
        flat.extend(group)
    if sorted(flat) != list(range(total)):
        raise BadLayout(f"a layout must place each of the {total} devices once")
    return Layout(tuple(counts), tuple(out))


@dataclass(frozen=True)
class Mesh:
    """A problem's declared mesh: axis names and sizes, over devices 0..n-1 in row-major order."""

    axes: tuple[str, ...]
    shape: tuple[int, ...]

    @property
    def devices(self) -> int:
        return math.prod(self.shape)


Spec = tuple[tuple[str, ...], ...]


def spec_layout(spec: Spec, mesh: Mesh) -> Layout:
    """The layout of ``PartitionSpec(*spec)`` over ``mesh`` (each entry: the mesh axes of one dimension,
    major first), as GSPMD places it: tiles in row-major order, each held by the devices that differ only
    along the mesh axes the spec does not use."""
    sizes = dict(zip(mesh.axes, mesh.shape, strict=True))
    tiles = tuple(math.prod(sizes[a] for a in dim) for dim in spec)
    used = [a for dim in spec for a in dim]
    free = [a for a in mesh.axes if a not in used]
    strides = {a: math.prod(mesh.shape[i + 1 :]) for i, a in enumerate(mesh.axes)}
    groups: list[tuple[int, ...]] = []
    for index in itertools.product(*(range(sizes[a]) for a in used)):
        base = sum(i * strides[a] for i, a in zip(index, used, strict=True))
        members = [
            base + sum(i * strides[a] for i, a in zip(rest, free, strict=True))
            for rest in itertools.product(*(range(sizes[a]) for a in free))
        ]
        groups.append(tuple(sorted(members)))
    return Layout(tiles, tuple(groups))


def specs(ndim: int, mesh: Mesh) -> list[Spec]:
    """Every PartitionSpec of rank ``ndim`` over ``mesh``'s axes (each axis used at most once), fewest
    axes first."""
    out: list[Spec] = []
    for placement in itertools.product(range(ndim + 1), repeat=len(mesh.axes)):
        # placement[k]: the dimension mesh axis k shards (ndim: none); axes of one dimension in mesh order
        for orders in itertools.product(
            *[
                itertools.permutations([a for a, p in zip(mesh.axes, placement, strict=True) if p == d])
                for d in range(ndim)
            ]
        ):
            out.append(tuple(tuple(o) for o in orders))
    out = list(dict.fromkeys(out))
    out.sort(key=lambda s: sum(len(d) for d in s))
    return out


def spec_of(layout: Layout, mesh: Mesh) -> Spec | None:
    """The PartitionSpec over ``mesh`` with this layout, or None when none has it."""
    for spec in specs(len(layout.tiles), mesh):
        if spec_layout(spec, mesh) == layout:
            return spec
    return None


def describe(layout: Layout, mesh: Mesh | None) -> str:
    """The layout in words: "replicated", "sharded over ('x',) on axis 0", or its tiles when no spec over
    the problem's mesh gives it."""
    if layout.replicated:
        return "replicated"
    spec = spec_of(layout, mesh) if mesh is not None and mesh.devices == _count(layout) else None
    if spec is not None:
        parts = [f"{tuple(axes)!r} on axis {d}" for d, axes in enumerate(spec) if axes]
        return "sharded over " + " and ".join(parts)
    if len(layout.groups) == 1:
        return f"on devices {list(layout.groups[0])} only"
    groups = ", ".join(str(list(g)) for g in layout.groups[:8]) + (", ..." if len(layout.groups) > 8 else "")
    return f"split into tiles {list(layout.tiles)} held by devices {groups}"


def _count(layout: Layout) -> int:
    return sum(len(g) for g in layout.groups)
