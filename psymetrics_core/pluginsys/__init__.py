"""pluginsys."""
