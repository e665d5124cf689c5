"""Point the real `huggingface_hub` and `datasets` clients of this process at a `kb serve` on 127.0.0.1.

Both libraries copy HF_ENDPOINT and their cache paths into module constants at import time, so
setting the environment inside a running interpreter is not enough: `configure_clients` sets the
environment (for subprocesses) and the import-time copies (for this process), through a pytest
monkeypatch that undoes everything at the end of the test.
"""
from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from kb_data.serve import client_env, serving

_OFFLINE = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")


def configure_clients(monkeypatch, url: str, home: Path, token: str | None = None) -> dict[str, str]:
    """Environment and module constants of both clients -> `url`, caches under `home`; returns the environment."""
    import datasets.config as D
    import huggingface_hub.constants as C
    from huggingface_hub import HfFileSystem, hf_api, hf_file_system

    env = {**client_env(url), "HF_HOME": str(home), "HF_HUB_CACHE": str(home / "hub"),
           "HF_DATASETS_CACHE": str(home / "datasets"), "HF_TOKEN_PATH": str(home / "token")}
    if token:
        env["HF_TOKEN"] = token
    for var in _OFFLINE:
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    host = url.split("//")[1].split(":")[0]
    for name, value in {"ENDPOINT": url, "HUGGINGFACE_CO_URL_TEMPLATE": url + "/{repo_id}/resolve/{revision}/{filename}",
                        "HF_URL_HOSTS": frozenset(set(C.HF_URL_HOSTS) | {host}), "HF_HUB_DISABLE_XET": True,
                        "HF_HUB_OFFLINE": False, "HF_HUB_DISABLE_IMPLICIT_TOKEN": False, "HF_HOME": env["HF_HOME"],
                        "HF_HUB_CACHE": env["HF_HUB_CACHE"], "HUGGINGFACE_HUB_CACHE": env["HF_HUB_CACHE"],
                        "HF_TOKEN_PATH": env["HF_TOKEN_PATH"], "HF_STORED_TOKENS_PATH": str(home / "stored_tokens")}.items():
        if hasattr(C, name):
            monkeypatch.setattr(C, name, value)
    monkeypatch.setattr(hf_api.api, "endpoint", url)  # module-level clients built at import time
    monkeypatch.setattr(hf_file_system.hffs, "endpoint", url)
    monkeypatch.setattr(hf_file_system.hffs._api, "endpoint", url)
    for name, value in {"HF_ENDPOINT": url, "HUB_DATASETS_URL": url + "/datasets/{repo_id}/resolve/{revision}/{path}",
                        "HF_DATASETS_CACHE": home / "datasets", "HF_HUB_OFFLINE": False, "HF_DATASETS_OFFLINE": False,
                        "HF_UPDATE_DOWNLOAD_COUNTS": False}.items():
        monkeypatch.setattr(D, name, value)
    HfFileSystem.clear_instance_cache()  # fsspec keeps instances (and their listings) per endpoint
    return env


@pytest.fixture
def loopback_only(monkeypatch):
    """Fail the test on any connection (or name lookup) beyond 127.0.0.1; the names asked are in the list."""
    asked: list[str] = []
    real_getaddrinfo, real_connect = socket.getaddrinfo, socket.socket.connect

    def getaddrinfo(host, *a, **k):
        if host not in ("127.0.0.1", "localhost", None):
            asked.append(str(host))
            raise socket.gaierror(socket.EAI_NONAME, f"loopback only: {host}")
        return real_getaddrinfo(host, *a, **k)

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in ("127.0.0.1", "::1"):
            raise AssertionError(f"a connection beyond 127.0.0.1 was attempted: {address}")
        return real_connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    return asked


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """A writable `kb serve` over a fresh store, with this process's clients pointed at it."""
    with serving(tmp_path / "served", writable=True, org="kb-org") as srv:
        configure_clients(monkeypatch, srv.url, tmp_path / "hf_home")
        yield srv


if "pytest" not in sys.modules:  # pragma: no cover
    raise ImportError("tests.hub_support is a pytest helper")
