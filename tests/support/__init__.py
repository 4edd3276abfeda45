"""Test harnesses: a local Slurm controller and nodes, network namespaces, Docker and compose."""
