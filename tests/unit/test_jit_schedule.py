"""jit_schedule: the waves a replay with transfers is issued in keep every dependency."""

from sharded.jit_schedule import schedule


def _s(w, kernel, args, outs, inplace=False):
    return ("s", w, kernel, tuple(args), tuple(outs), {}, None, inplace)


def _names(order):
    return [c[2] if c[0] != "E" else "E" + "".join(str(e[1]) for e in c[1]) for c in order]


def test_independent_exports_share_a_wave():
    cmds = [
        _s(0, "a", [("k", 1, None)], [("f", 1)]),
        ("e", 0, {0: [(("f", 1), None)]}),
        _s(1, "use_a", [("xr", 0, 0, 0)], [("f", 2)]),
        _s(0, "b", [("k", 2, None)], [("f", 3)]),
        ("e", 1, {0: [(("f", 3), None)]}),
        _s(1, "use_b", [("xr", 1, 0, 0)], [("f", 4)]),
    ]
    assert _names(schedule(cmds)) == ["a", "b", "E01", "use_a", "use_b"]


def test_in_place_write_waits_for_readers_of_its_views():
    cmds = [
        _s(0, "view", [("k", 5, None)], [("f", 1)]),  # may be a view of key 5
        ("e", 0, {0: [(("f", 1), None)]}),  # reads the view
        _s(1, "use", [("xr", 0, 0, 0)], [("f", 2)]),
        _s(0, "add_", [("k", 5, None)], [5], inplace=True),  # writes what the view shows
        _s(0, "after", [("k", 5, None)], [("f", 3)]),
    ]
    names = _names(schedule(cmds))
    assert names.index("add_") > names.index("E0")
    assert names.index("after") > names.index("add_")


def test_frees_wait_for_readers():
    cmds = [
        _s(0, "a", [("k", 1, None)], [("f", 1)]),
        ("e", 0, {0: [(("f", 1), None)]}),
        ("f", 0, (1,)),
        _s(1, "use", [("xr", 0, 0, 0)], [("f", 2)]),
    ]
    order = schedule(cmds)
    kinds = [c[0] for c in order]
    assert kinds.index("f") > kinds.index("E")


class _Lay:
    workers = (0, 1)


def _t(label, start, out):
    """A reduction tree across workers 0 and 1 (a one-group spec: root 0, one edge)."""
    spec = ("reduce_chunk", {}, "reduce_combine", "sum", start, (out,), None, False, None)
    spec += ((((0, 1), (0, 1)),), label, 8)
    return ("t", _Lay(), spec, ((1, 0),))


def test_a_waves_trees_go_together_after_its_work():
    cmds = [
        _s(0, "a", [("k", 1, None)], [("f", 1)]),
        _t("sum_a", ("f", 1), ("f", 10)),
        _s(0, "use_a", [("k", ("f", 10), None)], [("f", 2)]),  # reads a tree's result
        _s(0, "b", [("k", 2, None)], [("f", 3)]),
        _t("sum_b", ("f", 3), ("f", 11)),
        ("e", 0, {0: [(("f", 11), None)]}),  # an export of a tree's result: same wave
        _s(1, "use_b", [("xr", 0, 0, 0)], [("f", 4)]),
    ]
    names = [c[2][10] if c[0] == "t" else n for c, n in zip(schedule(cmds), _names(schedule(cmds)))]
    assert names == ["a", "b", "sum_a", "sum_b", "E0", "use_a", "use_b"]
