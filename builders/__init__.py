"""Example custom builders: each is named by a spec in specs/ as `builders.MODULE:CLASS`."""
