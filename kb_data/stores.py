"""Open a store by kind: the local store or the Hugging Face Hub (one import above both implementations)."""
from __future__ import annotations

from .hub import HubStore
from .store import LocalStore, Store


def open_store(kind: str = "local", **kwargs) -> Store:
    """`open_store("local", root=...)` or `open_store("hub", org=..., token=..., endpoint=...)`."""
    if kind == "local":
        return LocalStore(kwargs.pop("root", None), **kwargs)
    if kind == "hub":
        return HubStore(**kwargs)
    raise ValueError(f"unknown store {kind!r}; use 'local' or 'hub'")
