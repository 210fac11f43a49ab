"""A pool's slots: each live worker has a distinct one in ``range(slots)`` (offset by the pool's
``slot_base``), reused round-robin once its worker is closed (the ``bwrap`` backend runs slot s as uid
60000+s)."""

from __future__ import annotations

from sandbox.backends.base import SandboxedProcess
from sandbox.session.pool_state import PoolState, finished


class SlotLeases:
    """Which slot each of a pool's workers holds (None: leased for a start not made yet)."""

    def __init__(self, state: PoolState, slots: int) -> None:
        self.state = state
        self.slots = slots
        #: slot -> the worker using it (None: leased, starting)
        self.owners: dict[int, SandboxedProcess | None] = {}
        self.next = 0

    def lease(self) -> int | None:
        """The next free slot, leased for a start; None when every slot is in use."""
        with self.state.cond:
            for i in range(self.slots):
                slot = (self.next + i) % self.slots
                owner = self.owners.get(slot)
                if slot not in self.owners or finished(owner):
                    self.next = slot + 1
                    self.owners[slot] = None
                    return slot
            return None

    def own(self, slot: int, worker: SandboxedProcess) -> None:
        with self.state.cond:
            self.owners[slot] = worker

    def skip(self, slot: int, why: str) -> None:
        """The slot is busy elsewhere (another process holds it): give it back and say why."""
        self.release(slot)
        with self.state.cond:
            self.state.last_error = why

    def release(self, slot: int) -> None:
        with self.state.cond:
            if slot in self.owners and self.owners[slot] is None:
                del self.owners[slot]

    def clear(self) -> None:
        with self.state.cond:
            self.owners.clear()
