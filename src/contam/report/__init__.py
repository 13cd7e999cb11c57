"""Rendering of result records as JSON, Markdown and HTML (everything shown is escaped)."""
