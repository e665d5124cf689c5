"""`kb serve`: the local store over the Hugging Face Hub's HTTP API, on 127.0.0.1.

    kb serve                       # http://127.0.0.1:8990, read-only
    export HF_ENDPOINT=http://127.0.0.1:8990
    python -c 'from datasets import load_dataset; print(load_dataset("local/kernelbench-v3-problems", revision="v0.1"))'

`datasets` and `huggingface_hub` then resolve revisions exactly as on the Hub: a tag is a commit
of the store, an unknown revision is an error, never another suite. The server reads the same
store `kb build` writes (no second copy). Repo ids: `<org>/name` (`--org`, default `local`; give
your Hub organisation and the same code runs against both) is the store's dataset `name`; any
other `x/name` is the store's `x/name`. A bare `name` is refused with a hint: huggingface_hub
builds its `hf://` paths only from `namespace/name`.

With `--writable`, the write calls `HubStore` makes work too (create repo, preupload, commit,
tag, branch), so `kb publish --store hub` can be tried offline. Every file is stored as a regular
blob (no LFS, no Xet). Endpoints, as the clients call them:

    GET  /api/whoami-v2                      POST /api/repos/create      POST /api/validate-yaml
    GET  /api/datasets/{repo}[/revision/{rev}]    GET /api/datasets/{repo}/refs
    GET  /api/datasets/{repo}/tree/{rev}[/{path}] POST /api/datasets/{repo}/paths-info/{rev}
    GET  /api/datasets/{repo}/commits/{rev}  POST /api/datasets/{repo}/preupload/{rev}
    POST /api/datasets/{repo}/commit/{rev}   POST /api/datasets/{repo}/tag/{rev}
    POST|DELETE /api/datasets/{repo}/branch/{branch}
    GET|HEAD /datasets/{repo}/resolve/{rev}/{path}   (Range: bytes=a-b | a- | -n)
"""
from __future__ import annotations

import base64
import contextlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import parse_qs, unquote, urlsplit

from .folders import RevisionError, front_matter, git_blob_sha1
from .store import DEFAULT_BRANCH, LocalStore, PublishError

DEFAULT_PORT = 8990
DEFAULT_ORG = "local"
LOOPBACK = "127.0.0.1"
_OPS = {"revision", "refs", "tree", "paths-info", "commits", "preupload", "commit", "tag", "branch"}
_GITATTRIBUTES = b"# kb serve stores every file as a regular blob\n"


class HttpError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None, commit: str | None = None):
        super().__init__(message)
        self.status, self.message, self.code, self.commit = status, message, code, commit


class StoreServer:
    """The HTTP server (a thread) over one LocalStore; `with StoreServer(store) as srv: srv.url`."""

    def __init__(self, store: LocalStore, host: str = LOOPBACK, port: int = 0, org: str = DEFAULT_ORG,
                 writable: bool = False, token: str | None = None):
        self.store, self.org, self.writable, self.token = store, org, writable, token
        self.requests: list[tuple[str, str, int]] = []  # (method, path, status): what clients asked
        self._sha1: dict[str, str] = {}
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer((host, port), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.app = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "StoreServer":
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="kb-serve", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- names, refs, files
    def dataset(self, repo: str) -> str:
        org, _, name = repo.rpartition("/")
        if not org:  # huggingface_hub (>= 2) builds hf:// paths only from namespace/name: fail early, saying so
            raise HttpError(404, f"Repository {repo} not found: ask for {self.org}/{repo} (the clients need "
                                 "namespace/name)", "RepoNotFound")
        name = name if org == self.org else repo
        try:
            self.store.revisions(name)
        except (RevisionError, ValueError):
            raise HttpError(404, f"Repository {repo} not found", "RepoNotFound") from None
        return name

    def commit_of(self, name: str, rev: str) -> str:
        try:
            return self.store.resolve(name, unquote(rev))
        except RevisionError as e:
            raise HttpError(404, str(e), "RevisionNotFound") from None

    def tree(self, name: str, rev: str) -> tuple[str, dict]:
        commit = self.commit_of(name, rev)
        return commit, self.store.tree(name, commit)[1]

    def oid(self, name: str, info: dict) -> str:
        """The git blob id of a stored file (what the Hub lists for a file not stored with LFS)."""
        sha = info["sha256"]
        if sha not in self._sha1:
            self._sha1[sha] = git_blob_sha1(self.store.verified_blob(name, info).read_bytes())
        return self._sha1[sha]

    def entries(self, name: str, commit: str, tree: dict, paths: list[str], expand: bool) -> list[dict]:
        dirs = {"/".join(p.split("/")[:i]) for p in tree for i in range(1, p.count("/") + 1)}
        out = []
        for path in paths:
            if path in tree:
                out.append({"type": "file", "path": path, "size": tree[path]["size"], "oid": self.oid(name, tree[path])})
            elif path in dirs:
                out.append({"type": "directory", "path": path, "size": 0, "oid": commit})
            else:
                continue
            if expand:
                out[-1]["lastCommit"] = {"id": commit, "title": "", "date": "1970-01-01T00:00:00.000Z"}
        return out

    # --- dispatch
    def handle(self, method: str, path: str, query: dict, headers, body: bytes) -> tuple[int, dict, Any]:
        seg = [unquote(s) for s in path.split("/")[1:]]
        if seg[:2] == ["api", "whoami-v2"]:
            return 200, {}, {"type": "user", "name": self.org, "fullname": self.org, "orgs": [],
                             "auth": {"type": "access_token", "accessToken": {"role": "write" if self.writable else "read"}}}
        if seg[:2] == ["api", "validate-yaml"]:  # upload_folder checks a card's YAML first; the builders wrote it
            return 200, {}, {"errors": [], "warnings": []}
        if seg[:3] == ["api", "repos", "create"] and method == "POST":
            return self.create_repo(json.loads(body or b"{}"), headers)
        if len(seg) >= 3 and seg[:2] == ["api", "datasets"]:
            rest = seg[2:]
            cut = 1 if len(rest) == 1 or rest[1] in _OPS else 2
            return self.repo_api(method, "/".join(rest[:cut]), rest[cut:], query, headers, body)
        if len(seg) >= 4 and seg[0] == "datasets" and "resolve" in seg[2:4]:
            at = seg.index("resolve", 2)
            return self.resolve(method, "/".join(seg[1:at]), seg[at + 1], "/".join(seg[at + 2:]), headers)
        raise HttpError(404, f"kb serve does not answer {method} {path}")

    def repo_api(self, method, repo, rest, query, headers, body):
        op, args = (rest[0], rest[1:]) if rest else ("revision", [DEFAULT_BRANCH])
        name = self.dataset(repo)
        if op in ("preupload", "commit", "tag", "branch"):
            self.check_write(headers)
        if op == "revision" and method == "GET":
            return self.info(name, repo, args[0] if args else DEFAULT_BRANCH)
        if op == "refs":
            refs = self.store.revisions(name)
            return 200, {}, {"branches": [{"name": b, "ref": f"refs/heads/{b}", "targetCommit": c}
                                          for b, c in sorted(refs["branches"].items())],
                             "tags": [{"name": t, "ref": f"refs/tags/{t}", "targetCommit": c}
                                      for t, c in sorted(refs["tags"].items())], "converts": []}
        if op == "tree":
            commit, tree = self.tree(name, args[0] if args else DEFAULT_BRANCH)
            under = "/".join(args[1:]).strip("/")
            prefix = under + "/" if under else ""
            recursive = query.get("recursive", ["false"])[-1].lower() in ("1", "true")
            dirs = {"/".join(p.split("/")[:i]) for p in tree for i in range(1, p.count("/") + 1)}
            if under and under not in dirs:
                raise HttpError(404, f"{under} does not exist", "EntryNotFound", commit)
            paths = sorted(p for p in (*dirs, *tree) if p.startswith(prefix)
                           and (recursive or "/" not in p[len(prefix):]))
            return 200, {}, self.entries(name, commit, tree, paths, "expand" in query)
        if op == "paths-info":
            commit, tree = self.tree(name, args[0])
            form = json.loads(body) if body.startswith(b"{") else parse_qs(body.decode())
            paths = form.get("paths", []) + form.get("paths[]", [])
            expand = str(form.get("expand", "false")).lower() in ("1", "true", "['true']")
            return 200, {}, self.entries(name, commit, tree, [p.strip("/") for p in paths], expand)
        if op == "commits":
            commit = self.commit_of(name, args[0])
            return 200, {}, [{"id": commit, "title": "", "message": "", "authors": [], "date": "1970-01-01T00:00:00.000Z"}]
        if op == "preupload":
            commit, tree = self.tree(name, args[0])
            files = json.loads(body).get("files", [])
            return 200, {}, {"commitOid": commit, "files": [
                {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                 "oid": self.oid(name, tree[f["path"]]) if f["path"] in tree else None} for f in files]}
        if op == "commit":
            return self.commit(name, repo, args[0], body)
        if op == "tag" and method == "POST":
            commit = self.commit_of(name, args[0])
            tag = json.loads(body)["tag"]
            self.set_ref(name, "tags", tag, commit)
            return 200, {}, {"name": tag, "ref": f"refs/tags/{tag}", "targetCommit": commit}
        if op == "branch":
            branch = "/".join(args)
            if method == "DELETE":
                if branch == DEFAULT_BRANCH:
                    raise HttpError(403, "the default branch cannot be deleted")
                self.store.set_ref(name, "branches", branch, None)
            else:
                start = (json.loads(body or b"{}").get("startingPoint")) or DEFAULT_BRANCH
                self.set_ref(name, "branches", branch, self.commit_of(name, start))
            return 200, {}, {"success": True}
        raise HttpError(404, f"kb serve does not answer {method} {op}")

    def check_write(self, headers) -> None:
        if not self.writable:
            raise HttpError(403, "this kb serve is read-only (start it with --writable to publish to it)")
        if self.token is not None and headers.get("Authorization") != f"Bearer {self.token}":
            raise HttpError(401, "Invalid credentials in Authorization header")

    def set_ref(self, name: str, kind: str, ref: str, commit: str) -> None:
        try:
            self.store.set_ref(name, kind, ref, commit, create_only=True)
        except PublishError as e:
            raise HttpError(409, str(e)) from None

    def info(self, name: str, repo: str, rev: str):
        commit, tree = self.tree(name, rev)
        data = {"id": repo, "author": repo.rpartition("/")[0] or self.org, "sha": commit, "private": False,
                "disabled": False, "gated": False, "downloads": 0, "likes": 0, "tags": [],
                "lastModified": "1970-01-01T00:00:00.000Z", "siblings": [{"rfilename": p} for p in sorted(tree)]}
        if "README.md" in tree:
            with contextlib.suppress(ValueError):
                data["cardData"] = front_matter(self.store.verified_blob(name, tree["README.md"]).read_text("utf-8"))
        return 200, {}, data

    def create_repo(self, body: dict, headers):
        self.check_write(headers)
        if body.get("type", "model") != "dataset":
            raise HttpError(400, "kb serve holds datasets only")
        org = body.get("organization") or self.org
        repo = f"{org}/{body['name']}"
        name = body["name"] if org == self.org else repo
        with self._lock:
            if self.store.exists(name, any_ref=True):
                return 409, {}, {"error": "You already created this dataset repo", "url": f"datasets/{repo}"}
            self.store.create(name)
            tree = {".gitattributes": self.store.put_blob(name, _GITATTRIBUTES)}
            self.store.commit_tree(name, tree, "initial commit", DEFAULT_BRANCH, expect=None)
        return 200, {}, {"url": f"datasets/{repo}", "name": repo, "id": repo}

    def commit(self, name: str, repo: str, rev: str, body: bytes):
        lines = [json.loads(line) for line in body.decode("utf-8").splitlines() if line.strip()]
        header = lines[0]["value"]
        branch = unquote(rev)
        with self._lock:
            base, tree = self.tree(name, branch)
            if branch not in self.store.revisions(name)["branches"]:
                raise HttpError(400, f"{branch} is not a branch")
            if header.get("parentCommit") not in (None, base):
                raise HttpError(412, "A commit has happened since. Please refresh and try again.")
            tree = dict(tree)
            for item in lines[1:]:
                key, value = item["key"], item["value"]
                path = value["path"].strip("/")
                if key == "file":
                    data = base64.b64decode(value["content"]) if value.get("encoding") == "base64" else \
                        value["content"].encode("utf-8")
                    tree[path] = self.store.put_blob(name, data)
                elif key == "deletedFile":
                    if tree.pop(path, None) is None:
                        raise HttpError(404, f"no file {path}", "EntryNotFound", base)
                elif key == "deletedFolder":
                    for p in [p for p in tree if p.startswith(path + "/")]:
                        del tree[p]
                else:
                    raise HttpError(400, f"kb serve takes regular files only, not {key!r}")
            commit = self.store.commit_tree(name, tree, header.get("summary") or "commit", branch, expect=base)
        return 200, {}, {"success": True, "commitOid": commit, "commitUrl": f"datasets/{repo}/commit/{commit}",
                         "hookOutput": "", "pullRequestUrl": None}

    def resolve(self, method: str, repo: str, rev: str, path: str, headers):
        name = self.dataset(repo)
        commit, tree = self.tree(name, rev)
        if path not in tree:
            raise HttpError(404, f"Entry not found: {path}", "EntryNotFound", commit)
        size = tree[path]["size"]
        out = {"ETag": f'"{self.oid(name, tree[path])}"', "X-Repo-Commit": commit, "Accept-Ranges": "bytes"}
        start, end, status = 0, size - 1, 200
        rng = headers.get("Range")
        if rng:
            m = re.fullmatch(r"\s*bytes=(\d*)-(\d*)\s*", rng)
            if not m or m.groups() == ("", ""):
                raise HttpError(416, f"invalid range {rng}")
            if m.group(1) == "":
                start = max(size - int(m.group(2)), 0)
            else:
                start, end = int(m.group(1)), min(int(m.group(2)) if m.group(2) else size - 1, size - 1)
            if start > end:
                raise HttpError(416, f"range not satisfiable: {rng}")
            status, out["Content-Range"] = 206, f"bytes {start}-{end}/{size}"
        return status, out, (self.store.verified_blob(name, tree[path]), start, end - start + 1)


MAX_BODY_BYTES = 4 << 30  # a commit's files travel in its body (base64): the largest shard published, with room


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kb-serve"

    def _body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks, total = [], 0
            while (size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)) > 0:
                if (total := total + size) > MAX_BODY_BYTES:
                    raise HttpError(413, f"a request body over {MAX_BODY_BYTES >> 20} MiB")
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass
            return b"".join(chunks)
        if (size := int(self.headers.get("Content-Length") or 0)) > MAX_BODY_BYTES:
            raise HttpError(413, f"a request body over {MAX_BODY_BYTES >> 20} MiB")
        return self.rfile.read(size)

    def _handle(self) -> None:
        app: StoreServer = self.server.app  # type: ignore[attr-defined]
        url = urlsplit(self.path)
        try:
            body = self._body() if self.command in ("POST", "PUT", "DELETE") else b""
            status, headers, payload = app.handle(self.command, url.path, parse_qs(url.query), self.headers, body)
        except HttpError as e:
            status, payload = e.status, {"error": e.message}
            headers = {"X-Error-Message": e.message.encode("ascii", "backslashreplace").decode()[:400]}
            if e.code:
                headers["X-Error-Code"] = e.code
            if e.commit:
                headers["X-Repo-Commit"] = e.commit
        except (KeyError, ValueError, TypeError, AttributeError, IndexError, RecursionError, PublishError) as e:
            # a malformed request (wrong JSON shapes included) or a refused write: an answer, never a dropped connection
            status, headers, payload = 400, {"X-Error-Message": str(e)[:400]}, {"error": f"{type(e).__name__}: {e}"}
        if status == 413:
            self.close_connection = True  # the body was not read
        app.requests.append((self.command, self.path, status))
        self._send(status, headers, payload)

    def _send(self, status: int, headers: dict, payload: Any) -> None:
        if isinstance(payload, tuple):  # (file, offset, length)
            path, offset, length = payload
            data = b""
            if self.command != "HEAD":
                with open(path, "rb") as f:
                    f.seek(offset)
                    data = f.read(length)
            headers = {"Content-Type": "application/octet-stream", **headers}
        else:
            data = json.dumps(payload).encode()
            length = len(data)
            headers = {"Content-Type": "application/json", **headers}
        self.send_response(status)
        for k, v in {**headers, "Content-Length": str(length)}.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = _handle

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet: the CLI prints its own line
        pass


def client_env(url: str) -> dict[str, str]:
    """The environment a `datasets`/`huggingface_hub` client of this server needs (set before they are imported)."""
    return {"HF_ENDPOINT": url, "HF_HUB_DISABLE_XET": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_UPDATE_DOWNLOAD_COUNTS": "0", "NO_PROXY": "127.0.0.1,localhost"}


@contextlib.contextmanager
def serving(root: str | Path | None = None, **kwargs) -> Iterator[StoreServer]:
    """`with serving(store_root) as srv:` the store served on a free loopback port until the block ends."""
    with StoreServer(LocalStore(root), **kwargs) as srv:
        yield srv
