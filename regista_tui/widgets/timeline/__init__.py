"""Timeline widgets of regista-tui."""
