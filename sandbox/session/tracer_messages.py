"""What the tracer is sent (the job) and what is kept of what it claims: pure functions over one frame.

The tracer is not trusted: each claim is bounded here (texts cut, numbers checked) and a program over the
size cap is a protocol error; what it claims only ever describes its own submission.
"""

from __future__ import annotations

from typing import Any

from sandbox.session.channel import MAX_MODULE_BYTES
from sandbox.session.monitor import SessionJob
from sandbox.session.reports import ProgramReport, RawRun, decode_failure, decode_view
from sandbox.session.reports import bounded_text as _text
from sandbox.session.reports import duration_ms as _ms
from sandbox.shared.wire import Blobs, Frame, ProtocolError, encode_leaf


def job_message(job: SessionJob, mark: str | None, section_token: str) -> tuple[dict[str, Any], list[bytes]]:
    """The tracer's job: the code, the PUBLIC signatures (abstract) and the public cases' values for its
    prints, the output mark it writes before ``public_done`` and the token of its section marks."""
    blobs = Blobs()
    prints = [
        {
            "sig": c.sig,
            "name": c.name,
            "index": c.index,
            "leaves": [encode_leaf(x, blobs) for x in c.leaves],
        }
        for c in job.cases
        if not c.secret
    ]
    message = {
        "type": "job",
        "code": job.code,
        "function": job.function,
        "args": job.args,
        "signatures": [{"id": s.id, "args": s.args} for s in job.sigs if not s.secret],
        "print_cases": prints,
        "check_inputs_unchanged": job.check_inputs_unchanged,
        "gradient": job.gradient,
        "autodiff": job.autodiff,
        "functions": job.functions,
        "devices": job.devices,
        "matmul_precision": job.matmul_precision,
        "output_mark": mark,
        "output_sections": section_token,
    }
    return message, [bytes(b) for b in blobs.items]


def program_report(frame: Frame, sig_id: int, failed: str) -> ProgramReport:
    """The tracer's program (or its claimed failure, frame type ``failed``) for one signature."""
    message = frame.message
    report = ProgramReport(sig=sig_id)
    if frame.type == failed:
        report.failure = decode_failure(message)
        return report
    module = frame.blob(message.get("module"))
    if len(module) > MAX_MODULE_BYTES:
        raise ProtocolError(f"program of {len(module)} bytes exceeds the {MAX_MODULE_BYTES}-byte cap")
    report.skeleton = message.get("skeleton")
    report.debug = message.get("debug") is True
    report.debug_unordered = message.get("debug_unordered") is True
    mutation = message.get("mutation")
    report.mutation = _text(mutation, 500) if isinstance(mutation, str) else None
    report.trace_ms = _ms(message.get("trace_ms"))
    return report


def keep_views(job: SessionJob, raw: RawRun, views: Any) -> None:
    """The public programs' text (the tracer's claim, shown back to this learner only): each kept on its
    signature's report, when that signature is public and traced; anything else is ignored."""
    if not isinstance(views, list):
        raise ProtocolError("the tracer's views are not a list")
    public = {s.id for s in job.sigs if not s.secret}
    for view in views[: len(public)]:
        if not isinstance(view, dict) or view.get("sig") not in public:
            continue
        report = raw.programs.get(view["sig"])
        if report is not None and report.failure is None and report.view is None:
            report.view = decode_view(view)
