"""Test harnesses: a throwaway local Slurm (:mod:`tests.support.local_slurm`) and virtual
network hosts (:mod:`tests.support.netns`) for the Slurm, multi-host and cluster tests."""
