"""Renders the generated input module."""
