"""Submission use-cases, beside the engine: what happens to a submission between an API request and the
store (``judge.store``) and the dispatcher (``judge.dispatch``), with no HTTP in it. The API's routes
(``judge.service.routes.submissions``) parse a request, call one of these, and map its result or its typed
refusal to a response.

    intake      store a new submission once: its ``Idempotency-Key`` (a retry answers the stored one), a place
                in the queue and its owner's quota, counted with the new row
    refusals    the typed refusals of the use-cases (what the route maps to 409/429)
    callbacks   whether a submission's callback may be delivered again
    streams     one event stream's share of its client's streams, released once; the events it sends
    waiting     why a queued submission waits, in words for a learner
"""
