"""Header widgets of regista-tui."""
