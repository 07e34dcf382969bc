"""Step widgets of regista-tui."""
