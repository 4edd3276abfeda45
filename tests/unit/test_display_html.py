"""Notebook pictures of the sharding (``sharded/display_svg.py``): the SVG of a tensor's blocks
parsed back with xml.etree (blocks to scale, one colour per worker, replicated copies, block
grids, N-d panels), its HTML table, ``visualize(path)`` to SVG and PNG, and ``st.stats()``'s
bar chart. Nothing here may fetch an element: the executor's command count must not move."""

import io
import sys
import xml.etree.ElementTree as ET

import pytest

import sharded as st
from sharded import display_svg
from sharded.display import sharding_map

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

SVG = "{http://www.w3.org/2000/svg}"


def rects(svg: str, kind: str = "shard") -> list:
    root = ET.fromstring(svg)
    return [r for r in root.iter(f"{SVG}rect") if r.get("class") == kind]


def texts(svg: str) -> list:
    return [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")]


def box(r) -> tuple:
    return tuple(float(r.get(k)) for k in ("x", "y", "width", "height"))


def test_1d_blocks_to_scale_and_coloured_by_worker():
    x = st.zeros(10, layout=st.Layout(chunks=(5, 3, 2), workers=[1, 0, 1]))
    rs = rects(display_svg.tensor_svg(x))
    assert len(rs) == 3
    widths = [box(r)[2] for r in rs]
    assert widths == pytest.approx([w * display_svg.WIDTH / 10 for w in (5, 3, 2)], abs=0.01)
    starts = [box(r)[0] for r in rs]  # side by side, in order
    assert starts == pytest.approx([starts[0] + sum(widths[:i]) for i in range(3)], abs=0.02)
    assert [int(r.get("data-worker")) for r in rs] == [1, 0, 1]
    assert [r.get("fill") for r in rs] == [display_svg.colour(w) for w in (1, 0, 1)]
    assert rs[0].get("fill") != rs[1].get("fill")
    place = x.placement()
    assert [r.get("data-node") for r in rs] == [p["node"] for p in place]


def test_2d_row_split_heights_to_scale():
    x = st.zeros(6, 12, layout=st.Layout(chunks=(4, 2)))
    rs = rects(display_svg.tensor_svg(x))
    assert [box(r)[3] for r in rs] == [160.0, 80.0]  # 6x12 draws 240 px high: 4 and 2 rows
    assert {box(r)[2] for r in rs} == {display_svg.WIDTH}


def test_block_grid_drawn_as_a_grid():
    x = st.zeros(4, 9, layout=st.Layout(chunks={0: (1, 3), 1: (2, 3, 4)}))
    lay = x.layout
    rs = rects(display_svg.tensor_svg(x))
    assert len(rs) == 6
    xs = sorted({box(r)[0] for r in rs})
    ys = sorted({box(r)[1] for r in rs})
    assert len(xs) == 3 and len(ys) == 2
    for r in rs:
        x0, y0, w, h = box(r)
        row, col = ys.index(y0), xs.index(x0)
        assert int(r.get("data-shard")) == lay.index((row, col))
        assert int(r.get("data-worker")) == lay.workers[lay.index((row, col))]
        assert w == pytest.approx((2, 3, 4)[col] / 9 * display_svg.WIDTH, abs=0.01)
    heights = sorted({box(r)[3] for r in rs})
    assert heights[1] / heights[0] == pytest.approx(3, rel=1e-3)


def test_replicated_drawn_as_stacked_copies():
    x = st.zeros(4, 6, layout=st.Layout.replicated())
    svg = display_svg.tensor_svg(x)
    copies = rects(svg, "copy")
    holders = list(x.layout.workers)
    assert not rects(svg) and len(copies) == min(len(holders), display_svg.MAX_COPIES)
    assert len({box(r)[2:] for r in copies}) == 1  # every copy is the whole tensor
    assert sorted(int(r.get("data-worker")) for r in copies) == sorted(holders)
    caption = next(t for t in texts(svg) if t.startswith("replicated"))
    assert all(f"w{w}" in caption for w in holders)


def test_nd_draws_the_split_dims_in_panels():
    x = st.zeros(8, 6, 4, dim=1, shards=3)
    assert display_svg.drawn_dims(x.layout) == (1, 2)
    rs = rects(display_svg.tensor_svg(x))
    assert len(rs) == 3  # dim 1 (6) down in three blocks of 2, dim 2 (4) across
    assert [box(r)[3] for r in rs] == pytest.approx([display_svg.MAX_HEIGHT / 3] * 3, abs=0.01)
    y = st.zeros(4, 4, 2, layout=st.Layout.block((2, 2, 2)))
    rs = rects(display_svg.tensor_svg(y))
    assert len(rs) == 8
    assert sorted(int(r.get("data-shard")) for r in rs) == list(range(8))
    assert len({box(r)[0] for r in rs}) == 4  # two panels side by side, two columns each
    assert sum(t.startswith("dim 0: ") for t in texts(display_svg.tensor_svg(y))) == 2


def test_html_metadata_table_and_no_data_fetched():
    x = st.zeros(6, 5, shards=2, dtype=st.float64).requires_grad_()
    before = st.stats()["commands"]
    html = x._repr_html_()
    assert st.stats()["commands"] == before  # metadata only: nothing was queued
    root = ET.fromstring(html)
    meta = {tr.find("th").text: tr.find("td").text for tr in root.iter("tr")}
    assert meta["shape"] == "(6, 5)" and meta["dtype"] == "float64"
    assert meta["device"] == str(x.device) and meta["shards"] == "2"
    assert meta["layout"] == "split on dim 0 (chunks 3, 3)"
    assert meta["bytes"].startswith("240 ") and meta["requires_grad"] == "True"
    assert len(list(root.iter(f"{SVG}rect"))) >= 2
    rep = st.zeros(3, layout=st.Layout.replicated())._repr_html_()
    assert "replicated on" in rep


def test_visualize_without_path_prints_the_text_map(capsys):
    x = st.zeros(4, 2, shards=2)
    assert x.visualize() == sharding_map(x)
    assert capsys.readouterr().out == sharding_map(x) + "\n"
    buf = io.StringIO()
    x.visualize(buf)  # a file given first, as before path existed
    x.visualize(file=buf)
    assert buf.getvalue() == 2 * (sharding_map(x) + "\n")


def test_visualize_svg_file(tmp_path):
    x = st.zeros(4, 6, layout=st.Layout.block((2, 2)))
    out = x.visualize(tmp_path / "grid.SVG")
    assert out == str(tmp_path / "grid.SVG")
    assert len(rects((tmp_path / "grid.SVG").read_text())) == 4


def test_visualize_png_file(tmp_path):
    image = pytest.importorskip("matplotlib.image")
    x = st.zeros(4, 6, layout=st.Layout.block((2, 2)))
    x.visualize(str(tmp_path / "grid.png"))
    data = (tmp_path / "grid.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    c = display_svg.picture(x)
    assert image.imread(tmp_path / "grid.png").shape[:2] == (round(c.height), round(c.width))


def test_png_without_matplotlib_says_so(tmp_path, monkeypatch):
    # a None entry makes ``import matplotlib...`` fail, as on a machine without it
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(st.BackendUnavailable, match="needs matplotlib"):
        st.zeros(4).visualize(tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_visualize_bad_paths(tmp_path):
    x = st.zeros(4)
    with pytest.raises(st.ArgumentError, match=r"x\.jpg.*\.svg or \.png"):
        x.visualize(tmp_path / "x.jpg")
    with pytest.raises(st.ArgumentTypeError, match="42"):
        x.visualize(42)


def test_stats_bar_chart_bytes_per_worker():
    _keep = st.zeros(1000, shards=2)  # (live bytes on two workers)
    s = st.stats()
    assert isinstance(s, dict)
    root = ET.fromstring(s._repr_html_())
    bars = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "bar"]
    ws = s["workers"]
    assert [int(b.get("data-worker")) for b in bars] == [w["worker"] for w in ws]
    most = max(w["live_bytes"] for w in ws)
    for b, w in zip(bars, ws):
        assert float(b.get("width")) == pytest.approx(300 * w["live_bytes"] / most, abs=0.01)
        assert b.get("fill") == display_svg.colour(w["worker"])
