"""Sources: the `Builder` base class and the built-in builders, found by name in `registry`."""
