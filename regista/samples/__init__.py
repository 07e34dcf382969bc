"""Sample agents with offline demo models, for demos, the sample traces and tests.

``regista.samples.refund`` holds a customer-support refund agent whose tools work on a
local SQLite shop database; ``python -m regista.samples.generate`` writes the sample
traces in ``sample_traces/`` from it.
"""

#: Seconds each answer of the offline demo model takes when ``$REGISTA_DEMO_DELAY`` is unset.
#: ``regista-tui`` sets a human pace so that a fork of a sample trace visibly streams in;
#: everything else answers at once.
demo_delay: float = 0.0


def demo_pace(seconds: float) -> None:
    """Make the offline demo model take ``seconds`` per answer (unless
    ``$REGISTA_DEMO_DELAY`` says otherwise): ``regista-tui`` sets a human pace, so that a
    fork of a sample trace visibly streams in."""
    global demo_delay
    demo_delay = seconds
