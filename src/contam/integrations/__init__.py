"""Adapters that plug contam's scanners into other data-processing frameworks (optional extras)."""
