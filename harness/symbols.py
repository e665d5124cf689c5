"""The functions of an ELF64 file by file offset, from its own symbol table: how the judge names the CPU sampler's
samples in a library or a build (harness/sampler.py)."""
from __future__ import annotations

import collections
import mmap
import os
import re
import struct

from kb_data.rules import OP_FAMILIES

PLT_STUB = "[plt stub]"  # the name of a sample in a library's procedure linkage table


def functions_at(places: list[tuple[tuple[str, int], int]], own: dict[tuple[str, int], str]) -> list[str | None]:
    """The demangled function at each (file identity, file offset) of a library the judge can read (`own`: where, by
    identity: the judge's own framework files, or an installed file the submission did not make), from that file's
    own symbol table, never from a file the submission chose; None where there is none."""
    names: list[str | None] = [None] * len(places)
    for ident in {ident for ident, _ in places}:
        if ident not in own:
            continue
        at = [i for i, (key, _) in enumerate(places) if key == ident]
        try:  # a build's ELF is the submission's to make: any header it can write (an address past 64 bits raised)
            found = _symbols(own[ident], ident).names_at([places[i][1] for i in at])
        except (OSError, ValueError, struct.error, IndexError, ArithmeticError):
            continue  # unnamed: a build's unnamed code is counted as code made at run time
        for i, name in zip(at, found):
            names[i] = name
    return names


def load_segments(data) -> list[tuple[int, int, int, int]]:
    """(flags, file offset, file size, address) of an ELF64 file's loadable segments (PT_LOAD)."""
    phoff, phnum = struct.unpack_from("<Q", data, 0x20)[0], struct.unpack_from("<H", data, 0x38)[0]
    return [(flags, off, filesz, vaddr) for typ, flags, off, vaddr, _, filesz in
            (struct.unpack_from("<IIQQQQ", data, phoff + 56 * k) for k in range(phnum)) if typ == 1]


# back-references of an Itanium name (S_, S0_, T_...): each may repeat everything named before it, so a few dozen make
# its demangled text exponentially long (a build's 210-byte name demangled to gigabytes: red team, session 42)
_BACK_REFERENCE = re.compile(r"[ST][0-9A-Z]*_")
BACK_REFERENCES_MAX = 16


def _demangled(name: str, demangle) -> str:
    """`demangle(name)`, or the name as it is where its back-references could make the text exponentially long."""
    return name if len(_BACK_REFERENCE.findall(name)) > BACK_REFERENCES_MAX else demangle(name)


def file_version(ident: tuple[str, int], st: os.stat_result) -> tuple:
    """A file as what the judge reads from it is kept by: its identity, size and status-change time (a resident
    judge's next sandbox may get the last one's device and inode on its fresh tmpfs)."""
    return ident, st.st_size, st.st_ctime_ns


_TABLES: collections.OrderedDict = collections.OrderedDict()  # the last 32 files' symbol tables, by file_version


def _symbols(path: str, ident: tuple[str, int]) -> "_Symbols":
    """A file's symbol table, read once per file (an installed file is read through a path that names the mapping,
    which changes from one process to the next), by its file_version."""
    key = file_version(ident, os.stat(path))
    if key not in _TABLES:
        _TABLES[key] = _Symbols(path)
        if len(_TABLES) > 32:
            _TABLES.popitem(last=False)
    return _TABLES[key]


class _Symbols:
    """The functions of an ELF64 file by file offset: its full symbol table (.symtab), else its dynamic one; the
    file's loadable segments translate offsets to the addresses symbols carry."""

    def __init__(self, path: str):
        import numpy as np

        with open(path, "rb") as f:
            self.data = data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if data[:6] != b"\x7fELF\x02\x01":
            raise ValueError(f"{path}: not a little-endian ELF64 file")
        shoff = struct.unpack_from("<Q", data, 0x28)[0]
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
        sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        tables = {s[1]: s for s in sections}  # by type: SHT_SYMTAB 2, SHT_DYNSYM 11
        table = tables.get(2) or tables.get(11)
        if table is None:
            raise ValueError(f"{path}: no symbol table")
        self.strings = sections[table[6]][4]  # sh_link: its string table's file offset
        names_at = sections[struct.unpack_from("<H", data, 0x3E)[0]][4]  # e_shstrndx: the section names
        # the procedure linkage table's stubs: a jump on to another library's function, no work of their own
        self.stubs = [(s[3], s[3] + s[5]) for s in sections
                      if data[names_at + s[0]:data.find(b"\0", names_at + s[0])] in (b".plt", b".plt.sec", b".plt.got")]
        self.segments = [(off, off + filesz, vaddr) for _, off, filesz, vaddr in load_segments(data)]
        entry = np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"), ("value", "<u8"),
                          ("size", "<u8")])
        syms = np.frombuffer(data, dtype=entry, count=table[5] // 24, offset=table[4])
        syms = syms[((syms["info"] & 0xF) == 2) & (syms["size"] > 0)]  # STT_FUNC with a size
        order = np.argsort(syms["value"])
        self.values, self.sizes, self.offsets = (syms[k][order] for k in ("value", "size", "name"))
        self.names: dict[int, str | None] = {}

    def names_at(self, offsets: list[int]) -> list[str | None]:
        import numpy as np
        import torch

        vaddrs = np.array([next((v + off - lo for lo, hi, v in self.segments if lo <= off < hi), 0) for off in offsets],
                          dtype=np.uint64)
        idx = self.values.searchsorted(vaddrs, side="right").astype(np.int64) - 1
        out = []
        for vaddr, i in zip(vaddrs.tolist(), idx.tolist()):
            if any(lo <= vaddr < hi for lo, hi in self.stubs):
                out.append(PLT_STUB)
                continue
            if i < 0 or vaddr == 0 or vaddr >= int(self.values[i]) + int(self.sizes[i]):
                out.append(None)
                continue
            if i not in self.names:
                self.names[i] = self._name_of_address(i, torch._C._demangle)
            out.append(self.names[i])
        return out

    def _name_of_address(self, i: int, demangle) -> str | None:
        """The name of the function symbol `i` starts. Where the linker folded several identical functions into its
        code, any one name might be an op that did not run: many ops' boilerplate (output setters, destructors) is
        named by what the names share and how many they are; code whose every name is of one op family (a GEMM
        kernel's dtype variants) keeps the name of the fewest families, so that the family's work is still its."""
        first = i
        while first > 0 and self.values[first - 1] == self.values[i]:
            first -= 1
        names = set()
        for k in range(first, i + 1):
            start = self.strings + int(self.offsets[k])
            end = self.data.find(b"\0", start, start + 4096)
            if end > start:
                names.add(_demangled(self.data[start:end].decode(errors="replace"), demangle))
        if len(names) <= 1:
            return next(iter(names), None)
        families = [re.compile(f["cpu"], re.I) for f in OP_FAMILIES.values()]
        of = lambda name: sum(1 for r in families if r.search(name))  # noqa: E731
        if any(all(r.search(name) for name in names) for r in families):
            return f"{min(sorted(names), key=of)} (one of {len(names)} identical functions the linker folded)"
        return f"{os.path.commonprefix(sorted(names))}… ({len(names)} identical functions the linker folded)"
