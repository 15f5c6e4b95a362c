"""Internal plugins: the core's default implementation of every hook, registered last."""
