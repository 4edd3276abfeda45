#!/usr/bin/env python
"""Benchmark runner: same as ``sharded bench`` (see sharded/tools/bench.py for the cases)."""

import sys

from sharded.tools.bench import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
