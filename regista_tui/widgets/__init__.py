"""Widgets of regista-tui, grouped by screen region."""
