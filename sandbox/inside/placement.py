"""Where the executor's programs compile and run: this process's CPU host devices (one, or a problem's
``[sandbox] devices``, fixed at the process's start), XLA's compile options for them, the inputs placed
(replicated over every device) and the outputs gathered from their shards."""

from __future__ import annotations

from typing import Any

import numpy as np

from sandbox.inside.program_checks import Refused
from sandbox.shared.layouts import BadLayout, from_hlo


class Placement:
    """The devices of one executor process: ``partitions`` of them (devices 0..D-1 of its CPU backend)."""

    def __init__(self, jax: Any, backend: Any, partitions: int) -> None:
        from jax._src.lib import xla_client as xc  # type: ignore[attr-defined]

        self.jax, self.backend, self.partitions = jax, backend, partitions
        self.device = backend.local_devices()[0]
        self.mesh_devices: tuple[Any, ...] = tuple(backend.local_devices()[:partitions])
        if len(self.mesh_devices) != partitions:
            raise RuntimeError(f"this process has {len(self.mesh_devices)} devices, not {partitions}")
        self.devices: Any = xc.DeviceList(self.mesh_devices)
        self._replicated: Any = None

    def compile_options(self, compiler: Any, **overrides: Any) -> Any:
        """XLA's options for this process: one partition, or ``partitions`` over devices 0..D-1 with the
        Shardy partitioner (JAX's own), parameters as placed (replicated), outputs as XLA propagates them."""
        n = self.partitions
        options = compiler.get_compile_options(
            num_replicas=1,
            num_partitions=n,
            backend=self.backend,
            detailed_logging=False,
            device_assignment=np.array(self.mesh_devices).reshape(1, n) if n > 1 else None,
            **overrides,
        )
        if n > 1:
            build = options.executable_build_options
            build.use_spmd_partitioning = True
            build.use_shardy_partitioner = True
        return options

    def placed(self, leaves: list[Any]) -> list[Any]:
        """The case's leaves on this process's device, copied out of the request's frame, in one
        ``device_put`` (one call for all leaves: ~0.2 ms a leaf less than one call each)."""
        return list(self.jax.device_put([np.array(leaf) for leaf in leaves], self.device))

    def layouts(
        self, executable: Any, outputs: list[tuple[str, tuple[int, ...]]]
    ) -> tuple[list[dict[str, Any]], list[Any]]:
        """A compiled program's output layouts (``sandbox.shared.layouts``, as the wire has them) and output
        shardings (to gather its shards), or Refused when its inputs are not replicated (the executor
        places every input so) or an output's sharding cannot be read."""
        from jax._src.lib import xla_client as xc  # type: ignore[attr-defined]
        from jax._src.sharding_impls import GSPMDSharding

        n = self.partitions
        for op in executable.get_parameter_shardings() or []:
            if not xc.HloSharding.from_proto(op).is_replicated():
                raise Refused(
                    "inputs",
                    "the program asks for its inputs sharded, where the judge gives them replicated over "
                    f"{n} devices",
                )
        shardings = executable.get_output_shardings() or []
        if len(shardings) != len(outputs):
            raise Refused("outputs", "the compiled program's outputs have no sharding the judge can read")
        layouts: list[dict[str, Any]] = []
        gathers: list[Any] = []
        for op, (_, shape) in zip(shardings, outputs, strict=True):
            hlo = xc.HloSharding.from_proto(op)
            try:
                layout = from_hlo(hlo, len(shape), n)
            except BadLayout as exc:
                raise Refused("outputs", f"an output's sharding cannot be read: {exc}") from None
            layouts.append(layout.wire())
            gathers.append(GSPMDSharding(self.mesh_devices, hlo))
        return layouts, gathers

    def run_partitioned(
        self,
        executable: Any,
        shardings: list[Any],
        outputs: list[tuple[str, tuple[int, ...]]],
        leaves: list[Any],
    ) -> list[Any]:
        """Run on every device, each input replicated; each output gathered from its shards."""
        jax = self.jax
        replicated = self._replicated_sharding()
        arguments = [jax.device_put(np.array(leaf), replicated) for leaf in leaves]
        results = executable.execute_sharded(arguments)
        shards = results.disassemble_into_single_device_arrays()
        gathered = []
        for pieces, sharding, (_, shape) in zip(shards, shardings, outputs, strict=True):
            whole = jax.make_array_from_single_device_arrays(shape, sharding, list(pieces))
            gathered.append(np.asarray(whole))
        return gathered

    def _replicated_sharding(self) -> Any:
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        if self._replicated is None:
            mesh = Mesh(np.array(self.mesh_devices), ("_",))
            self._replicated = NamedSharding(mesh, PartitionSpec())  # type: ignore[no-untyped-call]
        return self._replicated
