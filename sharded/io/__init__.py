"""Durable state: checkpoints (``st.save``/``st.load``; a msgpack manifest, raw shard files,
CRC-32 checksums, written and read by the workers that hold the shards)."""

from .checkpoint import load, save

__all__ = ["save", "load"]
