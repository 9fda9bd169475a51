"""Executors of a build's plan: the local runner (processes on this machine) and the Beam runner."""
