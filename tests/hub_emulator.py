"""A local, on-disk emulator of the Hugging Face Hub HTTP API, for tests.

`HubEmulator` runs a real HTTP server (stdlib `http.server`, one thread per connection) on
127.0.0.1 and answers the subset of the Hub API that `huggingface_hub` (2.x) and `datasets` (5.x)
use to create dataset/model repos, commit files, tag revisions, list trees and download files
(including HTTP Range reads, which `HfFileSystem` / streaming `datasets` rely on). Tests drive the
REAL client libraries against it; nothing is mocked on the client side except where each library
reads its configuration.

Usage::

    from tests.hub_emulator import HubEmulator

    with HubEmulator(tmp_path / "hub") as hub:
        hub.endpoint            # "http://127.0.0.1:<port>"
        hub.env()               # env vars for a client process (HF_ENDPOINT, HF_TOKEN, caches, ...)
        hub.configure_clients(monkeypatch)   # point the already-imported libraries at the emulator

Pointing the client libraries at the emulator
---------------------------------------------
Both libraries copy `HF_ENDPOINT` (and the cache locations, offline/xet flags, ...) into module
constants *at import time* (`huggingface_hub.constants.ENDPOINT`, `datasets.config.HF_ENDPOINT`,
...), and `huggingface_hub` builds module-level clients at import time (`huggingface_hub.hf_api.api`
behind the `huggingface_hub.create_repo`-style functions, `huggingface_hub.hf_file_system.hffs`).
Setting environment variables inside an already running interpreter is therefore NOT enough.
There are two supported ways:

1. Subprocess (most faithful, ~3 s per interpreter because `datasets` imports torch): start the
   client code in a fresh interpreter with ``env=hub.subprocess_env()`` (= ``os.environ`` minus the
   offline switches, plus ``hub.env()``). The libraries then configure themselves exactly as in
   production.
2. In process (fast; what most tests use): ``hub.configure_clients(monkeypatch, home=...)`` sets the
   same environment variables AND overwrites the import-time copies: the relevant attributes of
   `huggingface_hub.constants` (ENDPOINT, HUGGINGFACE_CO_URL_TEMPLATE, HF_URL_HOSTS,
   HF_HUB_DISABLE_XET, HF_HUB_OFFLINE, cache/token paths, ...), the endpoints of the module-level
   `HfApi`/`HfFileSystem` instances, and `datasets.config` (HF_ENDPOINT, HUB_DATASETS_URL, cache
   paths, HF_HUB_OFFLINE, HF_UPDATE_DOWNLOAD_COUNTS=False, USE_PARQUET_EXPORT=False). It also clears
   fsspec's `HfFileSystem` instance cache. With a pytest `monkeypatch` everything is undone at the
   end of the test; without one it is undone when the emulator stops.

The datasets-server ("dataset viewer") API is not emulated: `datasets` derives its host by
prefixing the endpoint host with ``datasets-server.`` (``http://datasets-server.127.0.0.1:<port>``),
which does not resolve, and `datasets` treats any failure there as "no Parquet export" and reads
the repo files instead. In process, `datasets.config.USE_PARQUET_EXPORT` is set to False so that
call is not even attempted. Should any of those requests reach this server (`/parquet`, `/info`,
`/splits`, ..., or `/api/datasets/<id>/parquet`), they are answered 404 on purpose, and so is the
`refs/convert/parquet` revision (it does not exist here).

Storage (under ``root/server``, so it persists across client calls and emulator restarts):
``blobs/<sha256>`` holds file contents, content-addressed; ``repos/<type>/<namespace>/<name>.json``
holds one repo: an append-only list of commits (commit id = sha1 of the commit's canonical JSON:
parent, tree, message, author, date; each commit's tree maps path -> blob sha256), branches (main),
tags and pull-request refs (refs/pr/N); a commit also lists which of its paths are LFS files.
Creating a repo makes an "initial commit" holding a `.gitattributes` (LFS patterns for *.parquet,
*.arrow, *.safetensors, ...), as the Hub does.

Uploads. Xet is not emulated: clients must run with HF_HUB_DISABLE_XET=1 (`env()` sets it). The
preupload answer depends on ``upload_mode``: "regular" (every file inline, base64, in the commit
payload), "lfs" (every non-empty file through the git-LFS basic transfer) or "auto" (the default,
what the Hub does: LFS when the path matches an LFS pattern of the target revision's
.gitattributes, the file is >= 10 MB or its sample holds a NUL byte; regular otherwise). "auto" is
the default because `datasets.Dataset.push_to_hub` deletes its temporary Parquet shards right after
the preupload step and so only works if they were uploaded there, i.e. through LFS. LFS objects are
stored in the same content-addressed blob store (sha256 = LFS oid) and are served by ``resolve``
directly (no CDN redirect) with the sha256 as ETag, as the Hub's X-Linked-Etag.

Endpoints (``{t}`` is ``models``, ``datasets`` or ``spaces``; ``{rev}`` a branch, tag, ``refs/pr/N``
or commit sha, URL-encoded or not):

* ``GET /api/whoami-v2``; ``POST /api/validate-yaml`` (always valid)
* ``POST /api/repos/create`` (409 with the repo ``url`` if it exists), ``DELETE /api/repos/delete``
* ``GET /api/{t}/{ns}/{name}`` and ``.../revision/{rev}`` (repo info; ``blobs=1`` adds sizes)
* ``POST /api/{t}/{ns}/{name}/preupload/{rev}`` (upload mode per file, and the remote oid so the
  client skips unchanged files)
* ``POST /{datasets/|spaces/}{ns}/{name}.git/info/lfs/objects/batch`` (LFS batch API, "basic"
  transfer), ``PUT /_emulator/lfs/{oid}`` (the upload action; content checked against the oid),
  ``POST .../{name}.git/info/lfs/objects/verify``
* ``POST /api/{t}/{ns}/{name}/commit/{rev}`` (NDJSON: header, file, lfsFile of a stored blob,
  deletedFile, deletedFolder; ``parentCommit`` checked -> 412; ``create_pr=1`` opens refs/pr/N)
* ``GET /api/{t}/{ns}/{name}/refs`` (``include_prs=1``)
* ``POST``/``DELETE /api/{t}/{ns}/{name}/tag/{rev|tag}``, ``POST``/``DELETE .../branch/{branch}``
* ``GET /api/{t}/{ns}/{name}/tree/{rev}[/{path}]`` (``recursive``, ``expand``; Link-header
  pagination: ``tree_page_size`` entries per page, ``tree_expand_page_size`` with expand)
* ``POST /api/{t}/{ns}/{name}/paths-info/{rev}`` (form or JSON body)
* ``GET /api/{t}/{ns}/{name}/commits/{rev}`` (newest first, Link-header pagination)
* ``GET``/``HEAD /{datasets/|spaces/}{ns}/{name}/resolve/{rev}/{path}`` with ETag (git blob sha1,
  or sha256 for LFS files), X-Repo-Commit, Content-Length, Accept-Ranges and
  ``Range: bytes=a-b | a- | -n`` (206/416).

Errors carry the ``X-Error-Code`` header the client maps to exceptions: ``RepoNotFound`` ->
`RepositoryNotFoundError`, ``RevisionNotFound`` -> `RevisionNotFoundError`, ``EntryNotFound`` ->
`RemoteEntryNotFoundError` (with ``X-Repo-Commit``). Authentication: when the emulator has a token
(default "hf_test"), writes need ``Authorization: Bearer <token>``, a wrong token is a 401, and
private repos are invisible (404 RepoNotFound) without it; reads of public repos need no token.

Every request is recorded in ``hub.requests`` as ``(method, raw_path, status)``.
"""
from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import os
import re
import socket
import sys
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

__all__ = ["HubEmulator", "HubHTTPError"]

_API_TYPES = {"models": "model", "datasets": "dataset", "spaces": "space"}
_URL_PREFIX = {"model": "", "dataset": "datasets/", "space": "spaces/"}
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_SHA1_RE = re.compile(r"^[0-9a-f]{40}$")
_HEX_PREFIX_RE = re.compile(r"^[0-9a-f]{7,40}$")
_GITATTRIBUTES = b"""*.7z filter=lfs diff=lfs merge=lfs -text
*.arrow filter=lfs diff=lfs merge=lfs -text
*.bin filter=lfs diff=lfs merge=lfs -text
*.bz2 filter=lfs diff=lfs merge=lfs -text
*.ckpt filter=lfs diff=lfs merge=lfs -text
*.gz filter=lfs diff=lfs merge=lfs -text
*.h5 filter=lfs diff=lfs merge=lfs -text
*.joblib filter=lfs diff=lfs merge=lfs -text
*.lz4 filter=lfs diff=lfs merge=lfs -text
*.msgpack filter=lfs diff=lfs merge=lfs -text
*.npy filter=lfs diff=lfs merge=lfs -text
*.npz filter=lfs diff=lfs merge=lfs -text
*.onnx filter=lfs diff=lfs merge=lfs -text
*.parquet filter=lfs diff=lfs merge=lfs -text
*.pickle filter=lfs diff=lfs merge=lfs -text
*.pkl filter=lfs diff=lfs merge=lfs -text
*.pt filter=lfs diff=lfs merge=lfs -text
*.pth filter=lfs diff=lfs merge=lfs -text
*.safetensors filter=lfs diff=lfs merge=lfs -text
*.tar filter=lfs diff=lfs merge=lfs -text
*.tgz filter=lfs diff=lfs merge=lfs -text
*.xz filter=lfs diff=lfs merge=lfs -text
*.zip filter=lfs diff=lfs merge=lfs -text
*.zst filter=lfs diff=lfs merge=lfs -text
"""
_LFS_THRESHOLD = 10 * 1024 * 1024  # the Hub stores files above 10 MB with LFS whatever .gitattributes says
# environment variables that would put the clients offline: removed for client processes
_OFFLINE_VARS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HUGGINGFACE_CO_STAGING")
# ... and variables that would override what env() sets up (legacy token / cache locations)
_DROPPED_VARS = _OFFLINE_VARS + ("HUGGING_FACE_HUB_TOKEN", "HUGGINGFACE_HUB_CACHE", "HUGGINGFACE_ASSETS_CACHE",
                                 "HF_DATASETS_DOWNLOADED_DATASETS_PATH", "HF_DATASETS_EXTRACTED_DATASETS_PATH")


class HubHTTPError(Exception):
    """Raised inside a handler; turned into an HTTP error response with Hub-style headers."""

    def __init__(self, status: int, message: str, code: str | None = None, headers: dict | None = None,
                 body: dict | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = dict(headers or {})
        self.body = body


def _now_iso() -> str:
    t = datetime.now(timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _lfs_pointer(sha256: str, size: int) -> bytes:
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


def _lfs_patterns(gitattributes: bytes) -> list[str]:
    out = []
    for line in gitattributes.decode("utf-8", "replace").splitlines():
        parts = line.split()
        if len(parts) >= 2 and not parts[0].startswith("#") and "filter=lfs" in parts[1:]:
            out.append(parts[0])
    return out


def _matches_lfs(path: str, patterns: list[str]) -> bool:
    base = path.rsplit("/", 1)[-1]
    for pat in patterns:
        if "/" in pat.strip("/"):
            if fnmatch.fnmatchcase(path, pat.lstrip("/")):
                return True
        elif fnmatch.fnmatchcase(base, pat.strip("/")):
            return True
    return False


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def _truthy(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    return str(value).strip().lower() in {"1", "true", "yes", "on"}


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# --------------------------------------------------------------------------------------------
# storage
# --------------------------------------------------------------------------------------------
class _Repo:
    """One repository: append-only commits, refs. Serialised as one JSON file."""

    def __init__(self, repo_type: str, repo_id: str, private: bool, created_at: str):
        self.type = repo_type
        self.id = repo_id
        self.private = private
        self.created_at = created_at
        self.commits: list[dict] = []  # append-only, oldest first
        self.by_id: dict[str, dict] = {}
        self.branches: dict[str, str] = {}
        self.tags: dict[str, str] = {}
        self.prs: dict[int, str] = {}

    # -- (de)serialisation
    def to_json(self) -> dict:
        return {
            "type": self.type, "id": self.id, "private": self.private, "createdAt": self.created_at,
            "commits": self.commits, "branches": self.branches, "tags": self.tags,
            "pullRequests": {str(k): v for k, v in self.prs.items()},
        }

    @classmethod
    def from_json(cls, d: dict) -> "_Repo":
        repo = cls(d["type"], d["id"], d.get("private", False), d["createdAt"])
        for c in d["commits"]:
            repo.commits.append(c)
            repo.by_id[c["id"]] = c
        repo.branches = dict(d["branches"])
        repo.tags = dict(d["tags"])
        repo.prs = {int(k): v for k, v in d.get("pullRequests", {}).items()}
        return repo

    # -- refs
    def resolve(self, rev: str) -> str | None:
        """Branch, tag, refs/heads|tags|pr/..., full sha or unique sha prefix (>= 7) -> commit id."""
        if rev in self.branches:
            return self.branches[rev]
        if rev in self.tags:
            return self.tags[rev]
        if rev.startswith("refs/heads/") and rev[len("refs/heads/"):] in self.branches:
            return self.branches[rev[len("refs/heads/"):]]
        if rev.startswith("refs/tags/") and rev[len("refs/tags/"):] in self.tags:
            return self.tags[rev[len("refs/tags/"):]]
        m = re.fullmatch(r"refs/pr/(\d+)", rev)
        if m and int(m.group(1)) in self.prs:
            return self.prs[int(m.group(1))]
        low = rev.lower()
        if _SHA1_RE.match(low) and low in self.by_id:
            return low
        if _HEX_PREFIX_RE.match(low):
            hits = [cid for cid in self.by_id if cid.startswith(low)]
            if len(hits) == 1:
                return hits[0]
        return None

    def first_parent_chain(self, sha: str) -> list[dict]:
        out = []
        cur: str | None = sha
        while cur is not None:
            c = self.by_id[cur]
            out.append(c)
            cur = c["parents"][0] if c["parents"] else None
        return out


class _Store:
    def __init__(self, root: Path):
        self.root = root
        self.blob_dir = root / "blobs"
        self.repo_dir = root / "repos"
        self.blob_dir.mkdir(parents=True, exist_ok=True)
        self.repo_dir.mkdir(parents=True, exist_ok=True)
        self.lock = threading.RLock()
        self._blob_meta: dict[str, tuple[int, str]] = {}
        self.repos: dict[tuple[str, str], _Repo] = {}
        for f in sorted(self.repo_dir.glob("*/*/*.json")):
            repo = _Repo.from_json(json.loads(f.read_text()))
            self.repos[(repo.type, repo.id)] = repo

    # -- blobs
    def put_blob(self, data: bytes) -> str:
        sha256 = hashlib.sha256(data).hexdigest()
        path = self.blob_dir / sha256
        if not path.exists():
            _atomic_write(path, data)
        self._blob_meta[sha256] = (len(data), _git_blob_sha1(data))
        return sha256

    def has_blob(self, sha256: str) -> bool:
        return bool(re.fullmatch(r"[0-9a-f]{64}", sha256)) and (self.blob_dir / sha256).is_file()

    def blob_path(self, sha256: str) -> Path:
        return self.blob_dir / sha256

    def file_meta(self, commit: dict, path: str) -> dict:
        """size, git oid (of the LFS pointer for LFS files), etag and LFS info of a file in a commit."""
        sha256 = commit["tree"][path]
        size, git_oid = self.blob_meta(sha256)
        if path in commit.get("lfs", ()):
            pointer = _lfs_pointer(sha256, size)
            return {"size": size, "oid": _git_blob_sha1(pointer), "etag": sha256,
                    "lfs": {"oid": sha256, "size": size, "pointerSize": len(pointer)}}
        return {"size": size, "oid": git_oid, "etag": git_oid, "lfs": None}

    def blob_meta(self, sha256: str) -> tuple[int, str]:
        """(size, git blob sha1)"""
        meta = self._blob_meta.get(sha256)
        if meta is None:
            data = self.blob_path(sha256).read_bytes()
            meta = self._blob_meta[sha256] = (len(data), _git_blob_sha1(data))
        return meta

    # -- repos
    def save(self, repo: _Repo) -> None:
        ns, name = repo.id.split("/")
        _atomic_write(self.repo_dir / repo.type / ns / f"{name}.json", json.dumps(repo.to_json(), indent=1).encode())

    def delete(self, repo: _Repo) -> None:
        ns, name = repo.id.split("/")
        (self.repo_dir / repo.type / ns / f"{name}.json").unlink(missing_ok=True)
        self.repos.pop((repo.type, repo.id), None)

    def new_commit(self, repo: _Repo, parent: str | None, tree: dict[str, str], summary: str,
                   description: str, author: str, lfs: Iterable[str] = ()) -> dict:
        body = {
            "parents": [parent] if parent else [],
            "tree": dict(sorted(tree.items())),
            "lfs": sorted(set(lfs) & set(tree)),  # paths stored as LFS pointers
            "title": summary,
            "message": description,
            "author": author,
            "date": _now_iso(),
            "seq": len(repo.commits),  # keeps ids unique even for identical commits in the same millisecond
        }
        commit = {"id": hashlib.sha1(_canonical(body)).hexdigest(), **body}
        repo.commits.append(commit)
        repo.by_id[commit["id"]] = commit
        return commit


# --------------------------------------------------------------------------------------------
# HTTP plumbing
# --------------------------------------------------------------------------------------------
class _Response:
    def __init__(self, status: int = 200, body: bytes | None = b"", headers: dict | None = None,
                 file: tuple[Path, int, int] | None = None):
        self.status = status
        self.body = body if body is not None else b""
        self.headers = dict(headers or {})
        self.file = file  # (path, offset, length): streamed instead of body


def _json_response(obj: Any, status: int = 200, headers: dict | None = None) -> _Response:
    h = {"Content-Type": "application/json; charset=utf-8"}
    h.update(headers or {})
    return _Response(status, json.dumps(obj).encode(), h)


class _Request:
    def __init__(self, handler: "_Handler"):
        self.handler = handler
        self.method = handler.command
        self.raw_path = handler.path
        split = urlsplit(handler.path)
        self.path = split.path
        self.query_string = split.query
        self.query = parse_qs(split.query, keep_blank_values=True)
        # split on "/" BEFORE unquoting: clients send revisions/paths quoted with safe="" as one segment
        self.segments = [unquote(s) for s in split.path.split("/")[1:]]
        self.headers = handler.headers
        self._body: bytes | None = None

    def q(self, name: str, default: str | None = None) -> str | None:
        for key in (name, name + "[]"):
            if key in self.query and self.query[key]:
                return self.query[key][-1]
        return default

    def q_all(self, name: str) -> list[str]:
        return self.query.get(name, []) + self.query.get(name + "[]", [])

    @property
    def body(self) -> bytes:
        if self._body is None:
            self._body = self.handler._read_body()
        return self._body

    def json(self) -> Any:
        try:
            return json.loads(self.body or b"{}")
        except ValueError as e:
            raise HubHTTPError(400, f"Invalid JSON body: {e}") from None

    @property
    def bearer(self) -> str | None:
        auth = self.headers.get("Authorization")
        if not auth:
            return None
        parts = auth.split(None, 1)
        return parts[1].strip() if len(parts) == 2 and parts[0].lower() == "bearer" else auth.strip()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "HubEmulator/1.0"
    timeout = 60  # idle keep-alive connections are dropped after this
    disable_nagle_algorithm = True  # headers and body go out in separate writes: avoid 40 ms delayed-ACK stalls

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                line = self.rfile.readline()
                size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _handle(self) -> None:
        hub: HubEmulator = self.server.hub  # type: ignore[attr-defined]
        req = _Request(self)
        try:
            resp = hub._dispatch(req)
        except HubHTTPError as e:
            body = e.body if e.body is not None else {"error": e.message}
            # header values must be latin-1: escape anything else
            message = e.message.replace("\n", " ")[:500].encode("ascii", "backslashreplace").decode()
            headers = {"X-Error-Message": message}
            if e.code:
                headers["X-Error-Code"] = e.code
            headers.update(e.headers)
            resp = _json_response(body, e.status, headers)
        except Exception as e:  # pragma: no cover - server bug: report it to the client as a 500
            import traceback

            traceback.print_exc(file=sys.stderr)
            resp = _json_response({"error": f"HubEmulator internal error: {type(e).__name__}: {e}"}, 500)
        # drain an unread request body so the keep-alive connection stays in sync
        if req._body is None and self.command in ("POST", "PUT", "PATCH", "DELETE"):
            try:
                req.body
            except Exception:
                self.close_connection = True
        with hub._log_lock:
            hub.requests.append((self.command, self.path, resp.status))
        self._write(resp)

    def _write(self, resp: _Response) -> None:
        length = resp.file[2] if resp.file is not None else len(resp.body)
        self.send_response(resp.status)
        headers = {"Content-Length": str(length), **resp.headers}
        headers.setdefault("Content-Type", "application/octet-stream")
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command == "HEAD":
            return
        try:
            if resp.file is not None:
                path, offset, n = resp.file
                with open(path, "rb") as f:
                    f.seek(offset)
                    while n > 0:
                        chunk = f.read(min(n, 1 << 20))
                        if not chunk:
                            break
                        self.wfile.write(chunk)
                        n -= len(chunk)
            else:
                self.wfile.write(resp.body)
        except (BrokenPipeError, ConnectionResetError):  # client stopped reading (e.g. a partial stream)
            self.close_connection = True

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr logging
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # idle keep-alive connections must not block stop()
    allow_reuse_address = True

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conns_lock:
            self._conns.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._conns_lock:
            self._conns.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return  # a client went away: not worth a traceback
        super().handle_error(request, client_address)

    def close_connections(self) -> None:
        """Cut the keep-alive connections clients still hold, so no request reaches a stopped emulator."""
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Patcher:
    """The subset of pytest's MonkeyPatch used by `configure_clients`, for use without pytest."""

    _MISSING = object()

    def __init__(self) -> None:
        self._undo: list[tuple] = []

    def setattr(self, target: Any, name: str, value: Any, raising: bool = True) -> None:
        old = getattr(target, name, self._MISSING)
        if old is self._MISSING and raising:
            raise AttributeError(f"{target!r} has no attribute {name!r}")
        self._undo.append(("attr", target, name, old))
        setattr(target, name, value)

    def setenv(self, name: str, value: str) -> None:
        self._undo.append(("env", name, os.environ.get(name)))
        os.environ[name] = value

    def delenv(self, name: str, raising: bool = True) -> None:
        if name not in os.environ:
            if raising:
                raise KeyError(name)
            return
        self._undo.append(("env", name, os.environ.get(name)))
        del os.environ[name]

    def undo(self) -> None:
        for item in reversed(self._undo):
            if item[0] == "attr":
                _, target, name, old = item
                if old is self._MISSING:
                    delattr(target, name)
                else:
                    setattr(target, name, old)
            else:
                _, name, old = item
                if old is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = old
        self._undo.clear()


# --------------------------------------------------------------------------------------------
# the emulator
# --------------------------------------------------------------------------------------------
class HubEmulator:
    """HTTP emulator of the Hugging Face Hub API (see module docstring)."""

    def __init__(self, root: str | os.PathLike, *, token: str | None = "hf_test", user: str = "test-user",
                 host: str = "127.0.0.1", port: int = 0, tree_page_size: int = 1000,
                 tree_expand_page_size: int = 50, commits_page_size: int = 50, upload_mode: str = "auto"):
        if upload_mode not in ("auto", "regular", "lfs"):
            raise ValueError(f"upload_mode must be 'auto', 'regular' or 'lfs', not {upload_mode!r}")
        self.root = Path(root)
        self.store = _Store(self.root / "server")
        self.token = token
        self.user = user
        self.host = host
        self.port = port
        self.tree_page_size = tree_page_size
        self.tree_expand_page_size = tree_expand_page_size
        self.commits_page_size = commits_page_size
        self.upload_mode = upload_mode
        self.requests: list[tuple[str, str, int]] = []
        self._log_lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._patcher: _Patcher | None = None

    # ---------------------------------------------------------------- lifecycle
    def start(self) -> "HubEmulator":
        if self._server is not None:
            return self
        server = _Server((self.host, self.port), _Handler)
        server.hub = self  # type: ignore[attr-defined]
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"HubEmulator:{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._patcher is not None:
            self._patcher.undo()
            self._patcher = None
        if self._server is not None:
            self._server.shutdown()
            self._server.close_connections()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "HubEmulator":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def endpoint(self) -> str:
        if self._server is None:
            raise RuntimeError("HubEmulator is not running (use start() or a with-block)")
        return f"http://{self.host}:{self.port}"

    # ---------------------------------------------------------------- client configuration
    @property
    def client_home(self) -> Path:
        return self.root / "client"

    def env(self, home: str | os.PathLike | None = None) -> dict[str, str]:
        """Environment variables for a client of this emulator (caches isolated under `home`)."""
        home = Path(home) if home is not None else self.client_home
        env = {
            "HF_ENDPOINT": self.endpoint,
            "HF_HUB_DISABLE_XET": "1",
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_UPDATE_CHECK": "1",
            "HF_HUB_DISABLE_PROGRESS_BARS": "1",
            "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
            "HF_UPDATE_DOWNLOAD_COUNTS": "0",
            "HF_HOME": str(home),
            "HF_HUB_CACHE": str(home / "hub"),
            "HF_ASSETS_CACHE": str(home / "assets"),
            "HF_XET_CACHE": str(home / "xet"),
            "HF_TOKEN_PATH": str(home / "token"),
            "HF_DATASETS_CACHE": str(home / "datasets"),
            "HF_MODULES_CACHE": str(home / "modules"),
            "NO_PROXY": ",".join(filter(None, [os.environ.get("NO_PROXY", ""), "127.0.0.1", "localhost"])),
        }
        if self.token is not None:
            env["HF_TOKEN"] = self.token
        return env

    def subprocess_env(self, base: dict[str, str] | None = None,
                       home: str | os.PathLike | None = None) -> dict[str, str]:
        """`base` (default os.environ) minus offline switches and stale overrides, plus `env()`.

        For ``subprocess.run(..., env=hub.subprocess_env())``.
        """
        env = {k: v for k, v in (os.environ if base is None else base).items() if k not in _DROPPED_VARS}
        env.update(self.env(home))
        return env

    def configure_clients(self, monkeypatch: Any = None, home: str | os.PathLike | None = None) -> None:
        """Point the (imported) `huggingface_hub` and `datasets` modules of THIS process at the emulator.

        `monkeypatch` is a pytest MonkeyPatch (undone at test teardown); without it the changes are
        undone by `stop()`. See the module docstring for what is patched and why.
        """
        if monkeypatch is None:
            if self._patcher is None:
                self._patcher = _Patcher()
            monkeypatch = self._patcher
        env = self.env(home)
        home_path = Path(env["HF_HOME"])
        for var in _DROPPED_VARS:
            monkeypatch.delenv(var, raising=False)
        for key, value in env.items():
            monkeypatch.setenv(key, value)

        import huggingface_hub.constants as C
        from huggingface_hub import hf_api, hf_file_system

        hh = {
            "ENDPOINT": self.endpoint,
            "HUGGINGFACE_CO_URL_TEMPLATE": self.endpoint + "/{repo_id}/resolve/{revision}/{filename}",
            "HF_URL_HOSTS": frozenset(set(C.HF_URL_HOSTS) | {self.host}),
            "HF_HUB_DISABLE_XET": True,
            "HF_HUB_OFFLINE": False,
            "HF_HUB_DISABLE_TELEMETRY": True,
            "HF_HUB_DISABLE_UPDATE_CHECK": True,
            "HF_HUB_DISABLE_IMPLICIT_TOKEN": False,
            "HF_HOME": env["HF_HOME"],
            "default_cache_path": env["HF_HUB_CACHE"],
            "default_assets_cache_path": env["HF_ASSETS_CACHE"],
            "HUGGINGFACE_HUB_CACHE": env["HF_HUB_CACHE"],
            "HUGGINGFACE_ASSETS_CACHE": env["HF_ASSETS_CACHE"],
            "HF_HUB_CACHE": env["HF_HUB_CACHE"],
            "HF_ASSETS_CACHE": env["HF_ASSETS_CACHE"],
            "HF_XET_CACHE": env["HF_XET_CACHE"],
            "default_xet_cache_path": env["HF_XET_CACHE"],
            "HF_TOKEN_PATH": env["HF_TOKEN_PATH"],
            "HF_STORED_TOKENS_PATH": str(home_path / "stored_tokens"),
            "CHECK_FOR_UPDATE_DONE_PATH": str(home_path / ".check_for_update_done"),
            "CHECK_FOR_SKILL_UPDATE_DONE_PATH": str(home_path / ".check_for_skill_update_done"),
            "AGENT_HARNESSES_PATH": str(home_path / ".agent_harnesses.json"),
        }
        for name, value in hh.items():
            if hasattr(C, name):
                monkeypatch.setattr(C, name, value)
        # module-level clients built at import time with the import-time endpoint
        monkeypatch.setattr(hf_api.api, "endpoint", self.endpoint)
        monkeypatch.setattr(hf_file_system.hffs, "endpoint", self.endpoint)
        monkeypatch.setattr(hf_file_system.hffs._api, "endpoint", self.endpoint)
        for modname, attr, value in (("huggingface_hub.utils._cache_manager", "HF_HUB_CACHE", env["HF_HUB_CACHE"]),
                                     ("huggingface_hub.utils._cache_assets", "HF_ASSETS_CACHE", env["HF_ASSETS_CACHE"])):
            mod = sys.modules.get(modname)
            if mod is not None and hasattr(mod, attr):
                monkeypatch.setattr(mod, attr, value)

        try:
            import datasets.config as D
        except ImportError:  # pragma: no cover - datasets not installed
            D = None
        if D is not None:
            ds = {
                "HF_ENDPOINT": self.endpoint,
                "HUB_DATASETS_URL": self.endpoint + "/datasets/{repo_id}/resolve/{revision}/{path}",
                "HF_CACHE_HOME": env["HF_HOME"],
                "HF_DATASETS_CACHE": Path(env["HF_DATASETS_CACHE"]),
                "HF_MODULES_CACHE": Path(env["HF_MODULES_CACHE"]),
                "DOWNLOADED_DATASETS_PATH": Path(env["HF_DATASETS_CACHE"]) / "downloads",
                "EXTRACTED_DATASETS_PATH": Path(env["HF_DATASETS_CACHE"]) / "downloads" / "extracted",
                "HF_HUB_OFFLINE": False,
                "HF_DATASETS_OFFLINE": False,
                "HF_UPDATE_DOWNLOAD_COUNTS": False,
                # the datasets-server API is not emulated (see module docstring)
                "USE_PARQUET_EXPORT": False,
            }
            for name, value in ds.items():
                if hasattr(D, name):
                    monkeypatch.setattr(D, name, value)

        # fsspec caches HfFileSystem instances (with their dircache): drop them now and on undo
        monkeypatch.setattr(_FS_CACHE_RESET, "marker", None)

    # ---------------------------------------------------------------- helpers for tests
    def repo_state(self, repo_id: str, repo_type: str = "dataset") -> dict:
        """A JSON-able snapshot of a repo's stored state (commits oldest first, branches, tags)."""
        with self.store.lock:
            repo = self.store.repos.get((repo_type, repo_id))
            if repo is None:
                raise KeyError(f"{repo_type} {repo_id} not found")
            return json.loads(json.dumps(repo.to_json()))

    # ---------------------------------------------------------------- dispatch
    def _dispatch(self, req: _Request) -> _Response:
        s = req.segments
        m = req.method
        if s and s[0] == "api":
            if s[1:] == ["whoami-v2"] and m == "GET":
                return self._whoami(req)
            if s[1:] == ["validate-yaml"] and m == "POST":
                return _json_response({"errors": [], "warnings": []})
            if s[1:] == ["repos", "create"] and m == "POST":
                return self._create_repo(req)
            if s[1:] == ["repos", "delete"] and m == "DELETE":
                return self._delete_repo(req)
            if len(s) >= 4 and s[1] in _API_TYPES:
                return self._repo_api(req, _API_TYPES[s[1]], f"{s[2]}/{s[3]}", s[4:])
            raise HubHTTPError(404, f"Not emulated: {m} {req.path}")
        if len(s) == 3 and s[:2] == ["_emulator", "lfs"] and m == "PUT":
            return self._lfs_put(req, s[2].lower())
        lfs_at = 3 if s and s[0] in ("datasets", "spaces") else 2
        if len(s) == lfs_at + 4 and s[lfs_at - 1].endswith(".git") and m == "POST" \
                and s[lfs_at:lfs_at + 3] == ["info", "lfs", "objects"] and s[-1] in ("batch", "verify"):
            repo_type = _API_TYPES[s[0]] if lfs_at == 3 else "model"
            repo_id = f"{s[lfs_at - 2]}/{s[lfs_at - 1][:-len('.git')]}"
            if s[-1] == "batch":
                return self._lfs_batch(req, repo_type, repo_id)
            return self._lfs_verify(req, repo_type, repo_id)
        if s and s[0] in ("datasets", "spaces") and len(s) >= 5 and s[3] == "resolve":
            return self._resolve(req, _API_TYPES[s[0]], f"{s[1]}/{s[2]}", s[4:])
        if len(s) >= 4 and s[2] == "resolve":
            return self._resolve(req, "model", f"{s[0]}/{s[1]}", s[3:])
        # datasets-server routes (/parquet, /info, /splits, /rows, ...) and anything else: deliberately 404
        raise HubHTTPError(404, f"Not emulated: {m} {req.path}")

    def _repo_api(self, req: _Request, repo_type: str, repo_id: str, rest: list[str]) -> _Response:
        m = req.method
        if not rest and m == "GET":
            return self._info(req, repo_type, repo_id, None)
        if not rest:
            raise HubHTTPError(405, f"Method {m} not allowed")
        op, args = rest[0], rest[1:]
        if op == "revision" and m == "GET" and args:
            rev, extra = self._take_rev(args)
            if extra:
                raise HubHTTPError(404, "Not found")
            return self._info(req, repo_type, repo_id, rev)
        if op == "preupload" and m == "POST":
            return self._preupload(req, repo_type, repo_id, self._take_rev(args)[0] if args else "main")
        if op == "commit" and m == "POST":
            return self._commit(req, repo_type, repo_id, self._take_rev(args)[0] if args else "main")
        if op == "refs" and m == "GET" and not args:
            return self._refs(req, repo_type, repo_id)
        if op == "tag" and args and m in ("POST", "DELETE"):
            name = self._take_rev(args)[0]
            return self._create_tag(req, repo_type, repo_id, name) if m == "POST" else \
                self._delete_tag(req, repo_type, repo_id, name)
        if op == "branch" and args and m in ("POST", "DELETE"):
            name = "/".join(args)
            return self._create_branch(req, repo_type, repo_id, name) if m == "POST" else \
                self._delete_branch(req, repo_type, repo_id, name)
        if op == "tree" and m == "GET":
            rev, path = self._take_rev(args) if args else ("main", [])
            return self._tree(req, repo_type, repo_id, rev, "/".join(path).strip("/"))
        if op == "paths-info" and m == "POST":
            return self._paths_info(req, repo_type, repo_id, self._take_rev(args)[0] if args else "main")
        if op == "commits" and m == "GET":
            return self._commits(req, repo_type, repo_id, self._take_rev(args)[0] if args else "main")
        # e.g. /parquet (parquet export), /xet-read-token, /discussions, ...: deliberately not emulated
        raise HubHTTPError(404, f"Not emulated: {m} {req.path}")

    @staticmethod
    def _take_rev(args: list[str]) -> tuple[str, list[str]]:
        """First segment is the revision (quoted with safe=''), unless it is an unquoted refs/x/y."""
        if len(args) >= 3 and args[0] == "refs" and args[1] in ("pr", "convert", "heads", "tags"):
            return "/".join(args[:3]), args[3:]
        return args[0], args[1:]

    # ---------------------------------------------------------------- auth / lookups
    def _authenticated(self, req: _Request) -> bool:
        bearer = req.bearer
        if self.token is None:
            return True
        if bearer is None:
            return False
        if bearer != self.token:
            raise HubHTTPError(401, "Invalid credentials in Authorization header")
        return True

    def _require_write(self, req: _Request) -> None:
        if not self._authenticated(req):
            raise HubHTTPError(401, "You must be authenticated to perform this action (no token sent)")

    def _get_repo(self, req: _Request, repo_type: str, repo_id: str) -> _Repo:
        authed = self._authenticated(req)
        repo = self.store.repos.get((repo_type, repo_id))
        if repo is None or (repo.private and not authed):
            raise HubHTTPError(404, "Repository not found", code="RepoNotFound")
        return repo

    @staticmethod
    def _resolve_rev(repo: _Repo, rev: str) -> str:
        sha = repo.resolve(rev)
        if sha is None:
            raise HubHTTPError(404, f"Invalid rev id: {rev}", code="RevisionNotFound")
        return sha

    def _repo_url(self, repo: _Repo) -> str:
        return f"{self.endpoint}/{_URL_PREFIX[repo.type]}{repo.id}"

    # ---------------------------------------------------------------- endpoints: account / repos
    def _whoami(self, req: _Request) -> _Response:
        if not self._authenticated(req):
            raise HubHTTPError(401, "Invalid credentials in Authorization header")
        return _json_response({
            "type": "user", "id": hashlib.sha1(self.user.encode()).hexdigest()[:24], "name": self.user,
            "fullname": self.user, "email": None, "orgs": [], "isPro": False,
            "auth": {"type": "access_token", "accessToken": {"displayName": "hub-emulator", "role": "write"}},
        })

    def _create_repo(self, req: _Request) -> _Response:
        self._require_write(req)
        body = req.json()
        name = body.get("name") or ""
        namespace = body.get("organization") or self.user
        repo_type = body.get("type") or "model"
        if repo_type not in _URL_PREFIX:
            raise HubHTTPError(400, f"Invalid repo type: {repo_type}")
        if not _NAME_RE.match(name) or not _NAME_RE.match(namespace) or "--" in name or ".." in name:
            raise HubHTTPError(400, f"Invalid repo name: {namespace}/{name}")
        private = bool(body.get("private")) or body.get("visibility") == "private"
        repo_id = f"{namespace}/{name}"
        with self.store.lock:
            existing = self.store.repos.get((repo_type, repo_id))
            if existing is not None:
                raise HubHTTPError(409, f"You already created this {repo_type} repo",
                                   body={"error": f"You already created this {repo_type} repo",
                                         "url": self._repo_url(existing)})
            repo = _Repo(repo_type, repo_id, private, _now_iso())
            tree = {".gitattributes": self.store.put_blob(_GITATTRIBUTES)}
            commit = self.store.new_commit(repo, None, tree, "initial commit", "", "system")
            repo.branches["main"] = commit["id"]
            self.store.repos[(repo_type, repo_id)] = repo
            self.store.save(repo)
        return _json_response({"url": self._repo_url(repo), "name": repo_id, "id": repo_id})

    def _delete_repo(self, req: _Request) -> _Response:
        self._require_write(req)
        body = req.json()
        repo_type = body.get("type") or "model"
        repo_id = f"{body.get('organization') or self.user}/{body.get('name')}"
        with self.store.lock:
            repo = self._get_repo(req, repo_type, repo_id)
            self.store.delete(repo)
        return _json_response({})

    # ---------------------------------------------------------------- endpoints: read
    def _card_data(self, tree: dict[str, str]) -> dict | None:
        sha = tree.get("README.md")
        if sha is None:
            return None
        text = self.store.blob_path(sha).read_text(encoding="utf-8", errors="replace")
        m = re.match(r"^\s*---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(\r?\n|$)", text, re.S)
        if not m:
            return None
        try:
            import yaml  # optional: only used to mirror the Hub's cardData field
        except ImportError:  # pragma: no cover
            return None
        try:
            data = yaml.safe_load(m.group(1))
        except Exception:
            return None
        return data if isinstance(data, dict) else None

    def _info(self, req: _Request, repo_type: str, repo_id: str, rev: str | None) -> _Response:
        with self.store.lock:
            repo = self._get_repo(req, repo_type, repo_id)
            sha = self._resolve_rev(repo, rev or "main")
            commit = repo.by_id[sha]
            tree = dict(commit["tree"])
        blobs = _truthy(req.q("blobs"))
        siblings = []
        used = 0
        for path in sorted(tree):
            meta = self.store.file_meta(commit, path)
            used += meta["size"]
            sib: dict[str, Any] = {"rfilename": path}
            if blobs:
                sib.update({"size": meta["size"], "blobId": meta["oid"]})
                if meta["lfs"]:
                    sib["lfs"] = {"size": meta["size"], "sha256": meta["lfs"]["oid"],
                                  "pointerSize": meta["lfs"]["pointerSize"]}
            siblings.append(sib)
        ns = repo_id.split("/")[0]
        card = self._card_data(tree)
        data: dict[str, Any] = {
            "_id": hashlib.sha1(f"{repo_type}/{repo_id}".encode()).hexdigest()[:24],
            "id": repo_id,
            "author": ns,
            "sha": sha,
            "lastModified": commit["date"],
            "createdAt": repo.created_at,
            "private": repo.private,
            "gated": False,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "siblings": siblings,
            "usedStorage": used,
        }
        if card is not None:
            data["cardData"] = card
            tags = card.get("tags")
            if isinstance(tags, list):
                data["tags"] = [str(t) for t in tags]
        if repo_type == "model":
            data["modelId"] = repo_id
        if repo_type == "space":
            data["sdk"] = (card or {}).get("sdk", "static")
        expand = req.q_all("expand")
        if expand:
            data = {k: v for k, v in data.items() if k in set(expand) | {"_id", "id"}}
        return _json_response(data)

    def _refs(self, req: _Request, repo_type: str, repo_id: str) -> _Response:
        with self.store.lock:
            repo = self._get_repo(req, repo_type, repo_id)
            out: dict[str, Any] = {
                "branches": [{"name": b, "ref": f"refs/heads/{b}", "targetCommit": c}
                             for b, c in sorted(repo.branches.items())],
                "converts": [],
                "tags": [{"name": t, "ref": f"refs/tags/{t}", "targetCommit": c} for t, c in sorted(repo.tags.items())],
            }
            if _truthy(req.q("include_prs")):
                out["pullRequests"] = [{"name": f"refs/pr/{n}", "ref": f"refs/pr/{n}", "targetCommit": c}
                                       for n, c in sorted(repo.prs.items())]
        return _json_response(out)

    def _last_commits(self, repo: _Repo, sha: str, paths: Iterable[tuple[str, bool]]) -> dict[str, dict]:
        """For (path, is_dir) pairs: the newest commit (first-parent history) that changed it."""
        chain = repo.first_parent_chain(sha)

        def state(tree: dict[str, str], path: str, is_dir: bool):
            if not is_dir:
                return tree.get(path)
            prefix = path + "/"
            return tuple(sorted((p, b) for p, b in tree.items() if p.startswith(prefix)))

        out = {}
        for path, is_dir in paths:
            found = chain[-1]
            for i, c in enumerate(chain):
                parent_tree = chain[i + 1]["tree"] if i + 1 < len(chain) else {}
                if state(c["tree"], path, is_dir) != state(parent_tree, path, is_dir):
                    found = c
                    break
            out[path] = {"id": found["id"], "title": found["title"], "date": found["date"]}
        return out

    def _entries(self, commit: dict, paths_and_kinds: list[tuple[str, bool]]) -> list[dict]:
        tree = commit["tree"]
        out = []
        for path, is_dir in paths_and_kinds:
            if is_dir:
                prefix = path + "/"
                listing = sorted((p, b) for p, b in tree.items() if p.startswith(prefix))
                oid = hashlib.sha1(_canonical(listing)).hexdigest()
                out.append({"type": "directory", "oid": oid, "size": 0, "path": path})
            else:
                meta = self.store.file_meta(commit, path)
                entry = {"type": "file", "oid": meta["oid"], "size": meta["size"], "path": path}
                if meta["lfs"]:
                    entry["lfs"] = meta["lfs"]
                out.append(entry)
        return out

    @staticmethod
    def _dirs_of(tree: dict[str, str]) -> set[str]:
        dirs = set()
        for p in tree:
            parts = p.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                dirs.add("/".join(parts[:i]))
        return dirs

    def _page(self, req: _Request, items: list, page_size: int) -> tuple[list, dict]:
        cursor = req.q("cursor")
        try:
            start = int(base64.urlsafe_b64decode(cursor.encode()).decode()) if cursor else 0
        except Exception:
            raise HubHTTPError(400, f"Invalid cursor: {cursor}") from None
        page = items[start:start + page_size]
        headers = {}
        if start + page_size < len(items):
            params = [(k, v) for k, vs in req.query.items() if k != "cursor" for v in vs]
            params.append(("cursor", base64.urlsafe_b64encode(str(start + page_size).encode()).decode()))
            headers["Link"] = f'<{self.endpoint}{req.path}?{urlencode(params)}>; rel="next"'
        return page, headers

    def _tree(self, req: _Request, repo_type: str, repo_id: str, rev: str, path: str) -> _Response:
        recursive = _truthy(req.q("recursive"))
        expand = _truthy(req.q("expand"))
        with self.store.lock:
            repo = self._get_repo(req, repo_type, repo_id)
            sha = self._resolve_rev(repo, rev)
            tree = dict(repo.by_id[sha]["tree"])
            dirs = self._dirs_of(tree)
            if path and path not in dirs:
                raise HubHTTPError(404, f"{path} does not exist on \"{rev}\"", code="EntryNotFound",
                                   headers={"X-Repo-Commit": sha})
            prefix = path + "/" if path else ""
            depth = prefix.count("/")
            sel_dirs = sorted(d for d in dirs if d.startswith(prefix) and (recursive or d.count("/") == depth))
            sel_files = sorted(p for p in tree if p.startswith(prefix) and (recursive or p.count("/") == depth))
            kinds = [(d, True) for d in sel_dirs] + [(f, False) for f in sel_files]
            page_size = self.tree_expand_page_size if expand else self.tree_page_size
            kinds, headers = self._page(req, kinds, page_size)
            entries = self._entries(repo.by_id[sha], kinds)
            if expand:
                last = self._last_commits(repo, sha, kinds)
                for e in entries:
                    e["lastCommit"] = last[e["path"]]
        return _json_response(entries, headers=headers)

    def _paths_info(self, req: _Request, repo_type: str, repo_id: str, rev: str) -> _Response:
        ctype = (req.headers.get("Content-Type") or "").lower()
        if "json" in ctype:
            body = req.json()
            paths = body.get("paths", [])
            paths = [paths] if isinstance(paths, str) else list(paths)
            expand = _truthy(body.get("expand"))
        else:
            form = parse_qs(req.body.decode("utf-8"), keep_blank_values=True)
            paths = form.get("paths", []) + form.get("paths[]", [])
            expand = _truthy((form.get("expand") or ["false"])[-1])
        with self.store.lock:
            repo = self._get_repo(req, repo_type, repo_id)
            sha = self._resolve_rev(repo, rev)
            tree = dict(repo.by_id[sha]["tree"])
            dirs = self._dirs_of(tree)
            kinds = []
            for p in paths:
                p = p.strip("/")
                if p in tree:
                    kinds.append((p, False))
                elif p in dirs:
                    kinds.append((p, True))
            entries = self._entries(repo.by_id[sha], kinds)
            if expand:
                last = self._last_commits(repo, sha, kinds)
                for e in entries:
                    e["lastCommit"] = last[e["path"]]
        return _json_response(entries)

    def _commits(self, req: _Request, repo_type: str, repo_id: str, rev: str) -> _Response:
        formatted = "formatted" in req.q_all("expand")
        with self.store.lock:
            repo = self._get_repo(req, repo_type, repo_id)
            sha = self._resolve_rev(repo, rev)
            chain = repo.first_parent_chain(sha)
        items = []
        for c in chain:
            item = {"id": c["id"], "title": c["title"], "message": c["message"],
                    "authors": [{"user": c["author"], "avatar": None}], "date": c["date"]}
            if formatted:
                item["formatted"] = {"title": c["title"], "message": c["message"]}
            items.append(item)
        page, headers = self._page(req, items, self.commits_page_size)
        return _json_response(page, headers=headers)

    def _resolve(self, req: _Request, repo_type: str, repo_id: str, args: list[str]) -> _Response:
        if req.method not in ("GET", "HEAD"):
            raise HubHTTPError(405, f"Method {req.method} not allowed")
        if not args:
            raise HubHTTPError(404, "Missing revision")
        rev, path_parts = self._take_rev(args)
        path = "/".join(path_parts)
        with self.store.lock:
            repo = self._get_repo(req, repo_type, repo_id)
            sha = self._resolve_rev(repo, rev)
            commit = repo.by_id[sha]
            blob = commit["tree"].get(path)
        if blob is None:
            raise HubHTTPError(404, f"Entry not found: {path}", code="EntryNotFound", headers={"X-Repo-Commit": sha})
        meta = self.store.file_meta(commit, path)
        size = meta["size"]
        headers = {
            "Content-Type": "application/octet-stream",
            "ETag": f'"{meta["etag"]}"',  # git blob sha1, or the sha256 for LFS files (as the Hub)
            "X-Repo-Commit": sha,
            "Accept-Ranges": "bytes",
        }
        rng = req.headers.get("Range")
        if rng:
            m = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", rng)
            if not m or (m.group(1) == "" and m.group(2) == ""):
                raise HubHTTPError(416, f"Invalid range: {rng}", headers={"Content-Range": f"bytes */{size}"})
            if m.group(1) == "":  # suffix: last n bytes
                n = int(m.group(2))
                start, end = max(size - n, 0), size - 1
            else:
                start = int(m.group(1))
                end = int(m.group(2)) if m.group(2) else size - 1
                end = min(end, size - 1)
            if start >= size or start > end:
                raise HubHTTPError(416, f"Range not satisfiable: {rng}", headers={"Content-Range": f"bytes */{size}"})
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
            return _Response(206, headers=headers, file=(self.store.blob_path(blob), start, end - start + 1))
        return _Response(200, headers=headers, file=(self.store.blob_path(blob), 0, size))

    # ---------------------------------------------------------------- endpoints: write
    def _write_target(self, req: _Request, repo: _Repo, rev: str, create_pr: bool) -> str:
        """Commit id a write on `rev` builds on; `rev` must be a branch (or a PR ref) unless create_pr."""
        sha = self._resolve_rev(repo, rev)
        if create_pr:
            return sha
        name = rev[len("refs/heads/"):] if rev.startswith("refs/heads/") else rev
        if name in repo.branches or re.fullmatch(r"refs/pr/\d+", rev):
            return sha
        raise HubHTTPError(400, f"Invalid rev id: {rev} is not a branch")

    def _preupload(self, req: _Request, repo_type: str, repo_id: str, rev: str) -> _Response:
        self._require_write(req)
        body = req.json()
        files = body.get("files")
        if not isinstance(files, list):
            raise HubHTTPError(400, "Invalid preupload payload: 'files' must be a list")
        with self.store.lock:
            repo = self._get_repo(req, repo_type, repo_id)
            sha = self._write_target(req, repo, rev, _truthy(req.q("create_pr")))
            commit = repo.by_id[sha]
            tree = commit["tree"]
            attrs = tree.get(".gitattributes")
            patterns = _lfs_patterns(self.store.blob_path(attrs).read_bytes()) if attrs else []
            out = []
            for f in files:
                path = f.get("path")
                if not isinstance(path, str):
                    raise HubHTTPError(400, "Invalid preupload payload: missing path")
                mode = self._upload_mode_for(path, f, patterns)
                oid = None
                if path in tree:  # lets the client skip unchanged files: sha256 for LFS, git sha1 otherwise
                    oid = tree[path] if mode == "lfs" else self.store.blob_meta(tree[path])[1]
                out.append({"path": path, "uploadMode": mode, "shouldIgnore": False, "oid": oid})
        return _json_response({"files": out, "commitOid": sha})

    def _upload_mode_for(self, path: str, info: dict, patterns: list[str]) -> str:
        if self.upload_mode in ("regular", "lfs"):
            return self.upload_mode
        size = int(info.get("size") or 0)
        try:
            sample = base64.b64decode(info.get("sample") or "")
        except ValueError:
            sample = b""
        if size >= _LFS_THRESHOLD or _matches_lfs(path, patterns) or b"\x00" in sample:
            return "lfs"
        return "regular"

    # ---------------------------------------------------------------- git LFS (basic transfer)
    def _lfs_batch(self, req: _Request, repo_type: str, repo_id: str) -> _Response:
        self._require_write(req)
        body = req.json()
        if body.get("operation") != "upload":
            raise HubHTTPError(400, "The emulator's LFS batch endpoint only takes uploads")
        with self.store.lock:
            repo = self._get_repo(req, repo_type, repo_id)
        objects = []
        for obj in body.get("objects") or []:
            oid, size = str(obj.get("oid", "")).lower(), obj.get("size")
            if not re.fullmatch(r"[0-9a-f]{64}", oid) or not isinstance(size, int):
                objects.append({"oid": str(oid), "size": size if isinstance(size, int) else 0,
                                "error": {"code": 422, "message": "Invalid oid or size"}})
            elif self.store.has_blob(oid):
                objects.append({"oid": oid, "size": size})  # already stored: no actions
            else:
                objects.append({"oid": oid, "size": size, "authenticated": True, "actions": {
                    "upload": {"href": f"{self.endpoint}/_emulator/lfs/{oid}?size={size}", "header": {}},
                    "verify": {"href": f"{self._repo_url(repo)}.git/info/lfs/objects/verify", "header": {}},
                }})
        return _json_response({"transfer": "basic", "objects": objects},
                              headers={"Content-Type": "application/vnd.git-lfs+json"})

    def _lfs_put(self, req: _Request, oid: str) -> _Response:
        data = req.body
        if hashlib.sha256(data).hexdigest() != oid:
            raise HubHTTPError(400, f"LFS upload content does not match its oid {oid}")
        size = req.q("size")
        if size is not None and int(size) != len(data):
            raise HubHTTPError(400, f"LFS upload of {oid}: expected {size} bytes, got {len(data)}")
        self.store.put_blob(data)
        return _Response(200, headers={"Content-Type": "text/plain"})

    def _lfs_verify(self, req: _Request, repo_type: str, repo_id: str) -> _Response:
        body = req.json()
        with self.store.lock:
            self._get_repo(req, repo_type, repo_id)
        oid = str(body.get("oid", "")).lower()
        if not self.store.has_blob(oid) or self.store.blob_meta(oid)[0] != body.get("size"):
            raise HubHTTPError(404, f"LFS object {oid} not found")
        return _json_response({"success": True})

    def _commit(self, req: _Request, repo_type: str, repo_id: str, rev: str) -> _Response:
        self._require_write(req)
        lines = [ln for ln in req.body.decode("utf-8").splitlines() if ln.strip()]
        try:
            items = [json.loads(ln) for ln in lines]
        except ValueError as e:
            raise HubHTTPError(400, f"Invalid NDJSON commit payload: {e}") from None
        if not items or items[0].get("key") != "header":
            raise HubHTTPError(400, "Commit payload must start with a header line")
        header = items[0].get("value") or {}
        summary = header.get("summary") or ""
        if not summary:
            raise HubHTTPError(400, "Commit summary (message) is required")
        description = header.get("description") or ""
        parent_commit = header.get("parentCommit")
        create_pr = _truthy(req.q("create_pr"))
        with self.store.lock:
            repo = self._get_repo(req, repo_type, repo_id)
            base = self._write_target(req, repo, rev, create_pr)
            if parent_commit is not None and repo.resolve(parent_commit) != base:
                raise HubHTTPError(412, "A commit has happened since. Please refresh and try again.")
            tree = dict(repo.by_id[base]["tree"])
            lfs = set(repo.by_id[base].get("lfs", ()))
            for item in items[1:]:
                key, value = item.get("key"), item.get("value") or {}
                path = value.get("path")
                if not isinstance(path, str) or not path:
                    raise HubHTTPError(400, f"Missing path in commit operation {key}")
                if key in ("file", "lfsFile"):
                    path = path.strip()
                    if path.startswith("/") or any(part in ("", ".", "..") for part in path.split("/")) \
                            or path.startswith(".git/"):
                        raise HubHTTPError(400, f"Invalid path in repo: {path}")
                    if key == "file":
                        content = value.get("content", "")
                        if value.get("encoding", "utf-8") == "base64":
                            try:
                                data = base64.b64decode(content, validate=True)
                            except ValueError:
                                raise HubHTTPError(400, f"Invalid base64 content for {path}") from None
                        else:
                            data = content.encode("utf-8")
                        blob = self.store.put_blob(data)
                    else:
                        blob = str(value.get("oid", "")).lower()
                        if not self.store.has_blob(blob):
                            raise HubHTTPError(400, f"LFS object {blob} for {path} was never uploaded")
                    # a file replaces a folder of the same name and vice versa, as in git
                    for p in [p for p in tree if p.startswith(path + "/")]:
                        del tree[p]
                    tree[path] = blob
                    if key == "lfsFile":
                        lfs.add(path)
                    else:
                        lfs.discard(path)
                elif key == "deletedFile":
                    if path not in tree:
                        raise HubHTTPError(404, f"A file with this name doesn't exist: {path}", code="EntryNotFound",
                                           headers={"X-Repo-Commit": base})
                    del tree[path]
                elif key == "deletedFolder":
                    prefix = path.rstrip("/") + "/"
                    doomed = [p for p in tree if p.startswith(prefix)]
                    if not doomed:
                        raise HubHTTPError(404, f"A folder with this name doesn't exist: {path}", code="EntryNotFound",
                                           headers={"X-Repo-Commit": base})
                    for p in doomed:
                        del tree[p]
                else:
                    raise HubHTTPError(400, f"Unknown commit operation key: {key}")
            author = self.user if self.token is not None else "anonymous"
            commit = self.store.new_commit(repo, base, tree, summary, description, author, lfs)
            pr_url = None
            if create_pr:
                num = max(repo.prs, default=0) + 1
                repo.prs[num] = commit["id"]
                pr_url = f"{self._repo_url(repo)}/discussions/{num}"
            elif re.fullmatch(r"refs/pr/\d+", rev):
                repo.prs[int(rev.rsplit("/", 1)[1])] = commit["id"]
            else:
                repo.branches[rev[len("refs/heads/"):] if rev.startswith("refs/heads/") else rev] = commit["id"]
            self.store.save(repo)
        return _json_response({
            "success": True,
            "commitOid": commit["id"],
            "commitUrl": f"{self._repo_url(repo)}/commit/{commit['id']}",
            "hookOutput": "",
            "pullRequestUrl": pr_url,
        })

    def _create_tag(self, req: _Request, repo_type: str, repo_id: str, rev: str) -> _Response:
        self._require_write(req)
        body = req.json()
        tag = body.get("tag")
        if not isinstance(tag, str) or not tag or tag.startswith("refs/") or " " in tag:
            raise HubHTTPError(400, f"Invalid tag name: {tag!r}")
        with self.store.lock:
            repo = self._get_repo(req, repo_type, repo_id)
            sha = self._resolve_rev(repo, rev)
            if tag in repo.tags:
                raise HubHTTPError(409, f"Tag {tag} already exists")
            repo.tags[tag] = sha
            self.store.save(repo)
        return _json_response({"success": True, "name": tag, "ref": f"refs/tags/{tag}", "targetCommit": sha})

    def _delete_tag(self, req: _Request, repo_type: str, repo_id: str, tag: str) -> _Response:
        self._require_write(req)
        with self.store.lock:
            repo = self._get_repo(req, repo_type, repo_id)
            if tag not in repo.tags:
                raise HubHTTPError(404, f"Tag {tag} not found", code="RevisionNotFound")
            del repo.tags[tag]
            self.store.save(repo)
        return _json_response({"success": True})

    def _create_branch(self, req: _Request, repo_type: str, repo_id: str, branch: str) -> _Response:
        self._require_write(req)
        body = req.json() if req.body else {}
        if not branch or branch.startswith("refs/") or " " in branch:
            raise HubHTTPError(400, f"Invalid branch name: {branch!r}")
        with self.store.lock:
            repo = self._get_repo(req, repo_type, repo_id)
            start = body.get("startingPoint")
            sha = self._resolve_rev(repo, start) if start else repo.branches["main"]
            if branch in repo.branches:
                raise HubHTTPError(409, f"Branch {branch} already exists")
            repo.branches[branch] = sha
            self.store.save(repo)
        return _json_response({"success": True})

    def _delete_branch(self, req: _Request, repo_type: str, repo_id: str, branch: str) -> _Response:
        self._require_write(req)
        with self.store.lock:
            repo = self._get_repo(req, repo_type, repo_id)
            if branch not in repo.branches:
                raise HubHTTPError(404, f"Branch {branch} not found", code="RevisionNotFound")
            if branch == "main":
                raise HubHTTPError(403, "Cannot delete the default branch")
            del repo.branches[branch]
            self.store.save(repo)
        return _json_response({"success": True})


class _FsCacheReset:
    """Setting `.marker` clears fsspec's HfFileSystem instance cache: lets a monkeypatch undo clear it too."""

    @property
    def marker(self) -> None:
        return None

    @marker.setter
    def marker(self, value: Any) -> None:
        try:
            from huggingface_hub import HfFileSystem

            HfFileSystem.clear_instance_cache()
        except Exception:  # pragma: no cover
            pass


_FS_CACHE_RESET = _FsCacheReset()
