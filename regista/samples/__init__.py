"""Sample agents with offline demo models, for demos, the sample traces and tests.

``regista.samples.refund`` holds a customer-support refund agent whose tools work on a
local SQLite shop database; ``python -m regista.samples.generate`` writes the sample
traces in ``sample_traces/`` from it.
"""
