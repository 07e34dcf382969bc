"""Screens of regista-tui."""
