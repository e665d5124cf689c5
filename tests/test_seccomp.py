"""The sandbox's seccomp filter as a program: every call it names is tested, each argument rule compares what it says,
socket families and types only where asked (tests/corpus/hostile/ checks the refusals inside a real sandbox)."""
from __future__ import annotations

import pytest


def test_the_seccomp_filter_covers_every_denied_call_and_refuses_an_unknown_machine():
    """Each machine's table names a number for each denied call it has (a typo would leave one allowed), the program
    tests each of them, and a machine without a table gets no sandbox rather than one without the filter
    (hostile/denied_syscalls, socket_families_refused_gelu, timer_fanout_refused_on_a_cpu_gelu and
    moved_mapping_refused_on_a_cpu_gelu and proc_self_mem_refused_on_a_cpu_gelu check the refusals themselves inside a real
    sandbox); a socket's family is compared only where the call is socket or socketpair; the calls that fan a frozen sandbox's timers out are in a program only where asked (CPU gradings)."""
    from kb_data.harness import seccomp

    def compared(program, offset):
        """The constants the program compares with the word it loaded from this offset (0: the call's number, 16:
        its first argument)."""
        loaded, out = None, set()
        for code, _, _, k in program:
            if code == 0x20:  # BPF_LD|W|ABS
                loaded = k
            elif code == 0x15 and loaded == offset:  # BPF_JMP|JEQ|K
                out.add(k)
        return out

    every = (seccomp.DENIED_SYSCALLS + seccomp.TIMER_SYSCALLS + seccomp.SCHEDULING_SYSCALLS + seccomp.PATH_SOCKET_SYSCALLS
             + tuple(seccomp.ARGUMENT_RULES))
    ruled = {call for rules in seccomp.ARGUMENT_RULES.values() for call, *_ in rules}  # refused for some arguments only
    named = set(every) - set(seccomp.ARGUMENT_RULES) | ruled
    for machine, (_, numbers) in seccomp.SYSCALLS.items():
        assert set(numbers) <= named, machine
        assert len(set(numbers.values())) == len(numbers), machine
        tested = compared(seccomp.seccomp_program(machine, every), 0)
        assert set(numbers.values()) <= tested, machine
        plain = compared(seccomp.seccomp_program(machine), 0)
        asked_ruled = {call for name, rules in seccomp.ARGUMENT_RULES.items() if name not in seccomp.DENIED_SYSCALLS
                       for call, *_ in rules}
        asked = {numbers[n] for n in seccomp.TIMER_SYSCALLS + seccomp.SCHEDULING_SYSCALLS + seccomp.PATH_SOCKET_SYSCALLS
                 + tuple(asked_ruled) if n in numbers}
        assert not plain & (asked - set(seccomp.SOCKET_CALLS[machine])), machine  # only if asked (socket: its family)
        assert {numbers["fcntl"], numbers["ioctl"]} <= plain  # a file's signal owner: refused to every sandbox
        # each argument rule compares the argument it names with each of its constants, right after loading it, a
        # match jumping to the refusal past the other tests and the allowance
        program = seccomp.seccomp_program(machine, every)
        for call, arg, values, how in (r for rules in seccomp.ARGUMENT_RULES.values() for r in rules):
            at = next(i for i, (code, _, _, n) in enumerate(program) if code == 0x15 and n == numbers[call]
                      and program[i + 1] == (0x20, 0, 0, 16 + 8 * arg))
            assert program[at] == (0x15, 0, len(values) + 3, numbers[call])
            for i, k in enumerate(values):
                assert program[at + 2 + i] == (0x45 if how == "any" else 0x15, len(values) - i, 0, k)
            refusal = at + 2 + len(values) + 1
            assert program[refusal - 1] == (0x06, 0, 0, seccomp.SECCOMP_RET_ALLOW)
            assert program[refusal] == (0x06, 0, 0, seccomp.SECCOMP_RET_ERRNO | 1)  # EPERM
        assert set(seccomp.SOCKET_CALLS[machine]) <= plain  # the family compared: no default refusal of the call
        assert not set(seccomp.SOCKET_CALLS[machine]) & {numbers[n] for n in seccomp.DENIED_SYSCALLS if n in numbers}
        assert compared(seccomp.seccomp_program(machine), 16) == set(seccomp.SOCKET_FAMILIES), machine
        local = seccomp.seccomp_program(machine, families=seccomp.LOCAL_SOCKET_FAMILIES)  # the process level's
        assert compared(local, 16) == set(seccomp.LOCAL_SOCKET_FAMILIES) == {1}, machine
        # a socket's type (its second argument, offset 24) is compared only where asked (the process level)
        second = {k for rules in seccomp.ARGUMENT_RULES.values() for _, arg, values, _ in rules if arg == 1 for k in values}
        assert not compared(local, 24) - second, machine
        typed = seccomp.seccomp_program(machine, families=seccomp.LOCAL_SOCKET_FAMILIES, types=seccomp.LOCAL_SOCKET_TYPES)
        assert compared(typed, 24) - second == set(seccomp.LOCAL_SOCKET_TYPES) == {1, 5}, machine  # stream, seqpacket
        always = sum(arg == 1 for name in seccomp.DENIED_SYSCALLS for _, arg, *_ in seccomp.ARGUMENT_RULES.get(name, ()))
        assert sum(ins == (0x20, 0, 0, 24) for ins in typed) == len(seccomp.SOCKET_CALLS[machine]) + always, machine
    assert set(seccomp.SYSCALLS["x86_64"][1]) == named
    with pytest.raises(OSError, match="no system call table for riscv64"):
        seccomp.seccomp_program("riscv64")
