"""regista-tui: a time-travel debugger for regista traces."""
