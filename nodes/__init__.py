"""NodeFlow's node types: one folder per node, discovered by `nodes._registry.Registry`."""
