"""Host mechanisms the backends and the session use: cgroups, the seccomp filter, command lines, rlimits,
/proc, waiting on descriptors."""
