"""instruments."""
