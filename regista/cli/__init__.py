"""The ``regista`` command line."""
