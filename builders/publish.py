"""Publish a built dataset folder to a store: checked once here, then one commit (run records: an append)."""
from __future__ import annotations

from pathlib import Path

import pyarrow.dataset as pds

from kb_data.schema import RunRecord
from kb_data.store import PublishResult, Store

from .common import validate_folder
from .runs import append_runs


def publish_folder(store: Store, name: str, folder: str | Path, tag: str | None = None,
                   message: str | None = None) -> PublishResult:
    """Validate the folder (card configs, Parquet schema, every row), then publish it: the dataset's tree becomes
    the folder; a folder of run records is appended instead (only records whose id is not yet published)."""
    folder = Path(folder)
    info = validate_folder(folder)
    if info["record_type"] is RunRecord:
        rows = pds.dataset([str(folder / f) for f in info["files"] if f.endswith(".parquet")],
                           format="parquet").to_table().to_pylist()
        return append_runs(store, name, rows, message=message, tag=tag)
    return store.publish(name, folder, tag=tag, message=message)
