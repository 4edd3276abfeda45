"""Bringing up a Ray cluster for ``sharded``: head/worker start helpers and launch tooling.

This package only needs Ray (not ``sharded`` itself), so it can be imported on a bare node to
start Ray before the library is used.  Every launcher (the Slurm scripts, the Docker entrypoint,
docker-compose and the tests) goes through :mod:`cluster.ray_cluster`, so there is one copy of
the bring-up logic.
"""
