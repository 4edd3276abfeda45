"""The op machinery shared by every op family: the registry (one record per primitive), the
operand record and dataflow helpers, the chunk -> combine tree, the dtype rules' cache
(``rulecache``) and dispatch (``apply``).

Layers, each importing only those before it (no cycles, no imports inside functions)::

    errors, dtypes, layout     pure rules
    backend                    xp for a device (CuPy only in backend/cupy_.py)
    runtime                    workers, executors, sessions (the only Ray importer)
    tensor                     ShardedTensor: metadata, shard handles, reads
    core                       registry, dataflow, tree, rulecache, dispatch
    ops                        one module per op family (kernels, rules, planner, VJP, names)
    functional, autograd       derived ops; the autograd engine
    nn, optim                  modules and optimizers
    tools, cli                 demo, bench, info (outside the library's import graph)
"""
