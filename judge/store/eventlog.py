"""A finished grading's progress events, folded into its final event: one row instead of one per case.

While a submission is graded, each progress event (``status``, one ``case`` per case) is a row of
``submission_events``, so a stream can follow it. When the result is written, those rows are folded into
the final event's row (``fold``) in the same transaction, and whatever the result holds already is not
kept twice: the final event's ``result`` and every case event whose case is the result's own case are
stored as references. ``unfold`` gives the same events back, with their ids, so a stream replays or
resumes (``Last-Event-ID``) a finished grading exactly as before; only their ``created_at`` is the final
event's.

    fold(final, earlier, result)          -> the final row's data
    folded(data)                          whether a stored row's data is folded
    unfold(row_id, kind, data, result)    -> [(id, kind, data), ...], the folded events first
"""

from __future__ import annotations

from typing import Any

#: Keys of a folded final event's data (no event of the judge has a key starting with ``$``).
EARLIER = "$earlier"
FROM_RESULT = "$result"


def _result_case(data: dict[str, Any], result: dict[str, Any] | None) -> bool:
    """Whether a case event's data is ``{"index": i, "case": result's case i}``."""
    if result is None or set(data) != {"index", "case"} or not isinstance(data["index"], int):
        return False
    cases = result.get("cases")
    index = data["index"]
    return isinstance(cases, list) and 0 <= index < len(cases) and cases[index] == data["case"]


def fold(
    final: dict[str, Any], earlier: list[tuple[int, str, dict[str, Any]]], result: dict[str, Any] | None
) -> dict[str, Any]:
    """The final event's data with the attempt's ``earlier`` events (id, kind, data) folded in; what
    ``result`` holds (the submission's stored result) is kept as a reference."""
    folded = dict(final)
    if result is not None and folded.get("result") == result:
        del folded["result"]
        folded[FROM_RESULT] = True
    if earlier:
        # [id, kind, data], or [id, kind, i] for a case event that is the result's case i.
        folded[EARLIER] = [
            [ident, kind, data["index"] if _result_case(data, result) else data]
            for ident, kind, data in earlier
        ]
    return folded


def folded(data: dict[str, Any]) -> bool:
    """Whether a stored event's data was folded (``unfold`` needs the submission's result)."""
    return EARLIER in data or FROM_RESULT in data


def unfold(
    row_id: int, kind: str, data: dict[str, Any], result: dict[str, Any] | None
) -> list[tuple[int, str, dict[str, Any]]]:
    """The events a stored row stands for, in order: (id, kind, data); an unfolded row is itself."""
    if not folded(data):
        return [(row_id, kind, data)]
    events: list[tuple[int, str, dict[str, Any]]] = []
    cases = (result or {}).get("cases") or []
    for ident, earlier_kind, earlier_data in data.get(EARLIER, []):
        if isinstance(earlier_data, int):
            case = cases[earlier_data] if 0 <= earlier_data < len(cases) else None
            earlier_data = {"index": earlier_data, "case": case}
        events.append((int(ident), str(earlier_kind), earlier_data))
    final = {name: value for name, value in data.items() if name not in (EARLIER, FROM_RESULT)}
    if data.get(FROM_RESULT):
        # The final event's keys in the order the judge wrote them: status, verdict, result, the rest.
        final = {
            **{name: final[name] for name in ("status", "verdict") if name in final},
            "result": result,
            **{name: value for name, value in final.items() if name not in ("status", "verdict")},
        }
    events.append((row_id, kind, final))
    return events
