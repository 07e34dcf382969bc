"""Diff widgets of regista-tui."""
