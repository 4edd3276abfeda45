"""Tools built on the library, outside its import graph (``import sharded`` never loads them):
the tour (:mod:`.demo`), the benchmarks against NumPy and dask.array (:mod:`.bench`,
:mod:`.bench_linalg`) and their shared timing helpers (:mod:`.timing`). ``sharded demo`` and
``sharded bench`` (:mod:`sharded.cli`) run them."""
