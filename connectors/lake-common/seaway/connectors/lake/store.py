"""What the commit log needs from a lake's storage: a handful of whole-object operations.

The Spark sink implements it on Hadoop's ``FileSystem`` (atomic rename, temp folders), the S3
sink on an S3 bucket (an object appears whole when its upload completes; no temp objects).
Paths are relative to the lake's root, ``/``-separated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = ["LakeStore"]


class LakeStore(Protocol):
    """Storage operations of one lake (paths relative to its root)."""

    def exists(self, rel: str) -> bool:
        """Whether a file (object) is there."""

    def delete(self, rel: str) -> bool:
        """Remove one file; ``False`` when it was not there."""

    def delete_many(self, rels: Sequence[str]) -> None:
        """Remove several files (one request where the store has a bulk delete); missing ones are fine."""

    def rename(self, src: str, dst: str) -> bool:
        """Move ``src`` to ``dst`` (a new name); ``False`` when it could not."""

    def list_names(self, rel: str) -> list[str]:
        """Names (not paths) of the files directly in a folder; empty when there is none."""

    def read_bytes(self, rel: str) -> bytes:
        """A small file's content (commit records)."""

    def write_atomic(self, rel: str, data: bytes) -> None:
        """Create ``rel`` holding ``data``, visible all at once or not at all."""

    def discard_temp(self, topic: str, partition: int) -> None:
        """Drop what an interrupted writer of this Kafka partition left half done (temp files, uploads)."""

    def offset_by_listing(self, topic: str, partition: int) -> int | None:
        """With no commit log: the offset after the last record the data files hold, if they can tell."""
