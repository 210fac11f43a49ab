"""Argument kinds as plug-ins: one module per kind (``judge.kinds.base.Kind``), one registry
(``judge.kinds.registry.KINDS``)."""
