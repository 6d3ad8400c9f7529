"""Confine the Code node's worker process before it reads a job: what the user's Python may touch.

Three unprivileged Linux features, applied by the worker to itself (standard library only, via
ctypes; worker.py imports this before its job arrives, so a warm call pays nothing for it):

- **no capabilities** (when the server runs as root) and `no_new_privs`: nothing gains rights back.
- **Landlock** (Linux >= 5.13): the worker reads only the interpreter's standard library, the
  system's shared libraries and time zones, and reads and writes only its scratch folder. The data
  folder, the source tree, other jobs' folders, `/proc` and `/etc` are out of reach, and so are
  other processes (a Landlock domain cannot ptrace or, from ABI 6, signal what is outside it).
- **seccomp**: system calls that reach beyond the process fail with EPERM: sockets (no network,
  no local database or Redis, no UNIX sockets), starting programs, signalling or tracing other
  processes, leaving the process group (the time limit's kill must take every child), namespaces,
  mounts, io_uring, bpf and the kernel keyring.

`confine` raises `Unavailable` naming what is missing; the worker then refuses jobs unless the
install switched isolation off (NODEFLOW_CODE_ISOLATION=off, see docs/security.md).
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys
import sysconfig


class Unavailable(Exception):
    """This system cannot confine the worker (the message says what is missing)."""


# Landlock (include/uapi/linux/landlock.h). The syscall numbers are the same on every architecture.
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}  # every right the ABI knows
_NET_TCP = (1 << 0) | (1 << 1)  # bind, connect (ABI 4)
_SCOPES = (1 << 0) | (1 << 1)  # abstract UNIX sockets, signals (ABI 6)
_READ = _READ_FILE | _READ_DIR
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | (1 << 14) | (1 << 15)  # the rights a rule on a file may hold

# seccomp (include/uapi/linux/seccomp.h, filter.h)
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
_RET_ALLOW, _RET_KILL, _RET_EPERM = 0x7FFF0000, 0x80000000, 0x00050000 | 1
_LOAD, _JUMP_EQUAL, _JUMP_AT_LEAST, _RETURN = 0x20, 0x15, 0x35, 0x06

# Denied system calls by machine: (audit architecture, {name: number}).
_DENIED_NAMES = ("socket", "socketpair", "execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev",
                 "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open",
                 "pidfd_send_signal", "pidfd_getfd", "setsid", "setpgid", "unshare", "setns", "mount",
                 "io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "perf_event_open",
                 "userfaultfd", "add_key", "request_key", "keyctl")
_MACHINES = {
    "x86_64": (0xC000003E, (41, 53, 59, 322, 101, 310, 311, 62, 200, 234, 129, 297, 434, 424, 438, 112, 109, 272,
                            308, 165, 425, 426, 427, 321, 298, 323, 248, 249, 250)),
    "aarch64": (0xC00000B7, (198, 199, 221, 281, 117, 270, 271, 129, 130, 131, 138, 240, 434, 424, 438, 157, 154, 97,
                             268, 40, 425, 426, 427, 280, 241, 282, 217, 218, 219)),
}
_X32_BIT = 0x40000000  # x86_64's x32 calls carry this bit: refused outright


def confine(scratch: str) -> None:
    """Confine this process for good: read the standard library, read and write `scratch`, nothing else."""
    if not sys.platform.startswith("linux"):
        raise Unavailable(f"isolation uses Linux features; this system is {sys.platform}")
    libc = ctypes.CDLL(None, use_errno=True)
    machine = _MACHINES.get(platform.machine())
    if machine is None:
        raise Unavailable(f"system-call filtering is not set up for this machine ({platform.machine()})")
    abi = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_RULESET_VERSION))
    if abi < 1:
        raise Unavailable(f"Landlock is not available on this kernel ({_errno_text()}; Linux 5.13 or later "
                          "with Landlock enabled is needed)")
    _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(no_new_privs)")
    _drop_capabilities(libc)
    _restrict_files(libc, abi, scratch)
    _filter_system_calls(libc, *machine)


def _errno_text() -> str:
    return os.strerror(ctypes.get_errno())


def _check(result: int, what: str) -> None:
    if result < 0:
        raise Unavailable(f"{what} failed: {_errno_text()}")


def _drop_capabilities(libc) -> None:
    """A server running as root hands its worker every capability: drop them all (bounding set too)."""
    if os.geteuid() != 0:
        return
    for capability in range(64):
        if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) < 0:
            break  # past the last capability this kernel knows
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = struct.pack("Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = bytes(24)  # two empty {effective, permitted, inheritable} sets
    _check(libc.capset(header, data), "capset")


def _readable_places() -> list[str]:
    """What the interpreter may still need after the job starts: its modules, shared libraries, time zones."""
    paths = sysconfig.get_paths()
    places = {paths["stdlib"], paths["platstdlib"], os.path.join(paths["platstdlib"], "lib-dynload"),
              sys.base_prefix, "/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib",
              "/usr/share/zoneinfo", "/etc/localtime", "/dev/null", "/dev/zero", "/dev/urandom"}
    # sys.base_prefix holds the stdlib of a standalone Python (e.g. uv's); on a system Python it is /usr,
    # which is too wide: the system's folders above cover it.
    places.discard("/usr")
    places.discard("/")
    return sorted(place for place in places if os.path.exists(place))


def _restrict_files(libc, abi: int, scratch: str) -> None:
    handled_fs = _FS_BY_ABI[max(level for level in _FS_BY_ABI if level <= abi)]
    attributes = struct.pack("QQQ", handled_fs, _NET_TCP if abi >= 4 else 0, _SCOPES if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = libc.syscall(_CREATE_RULESET, attributes, ctypes.c_size_t(size), ctypes.c_uint32(0))
    _check(ruleset, "landlock_create_ruleset")
    try:
        for place in _readable_places():
            _allow(libc, ruleset, place, _READ)
        _allow(libc, ruleset, "/dev/null", _READ_FILE | _WRITE_FILE)
        _allow(libc, ruleset, scratch, handled_fs & ~_EXECUTE)
        _check(libc.syscall(_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _allow(libc, ruleset: int, place: str, rights: int) -> None:
    descriptor = os.open(place, os.O_PATH | os.O_CLOEXEC)
    try:
        if not os.path.isdir(place):
            rights &= _FILE_RIGHTS
        rule = struct.pack("=Qi", rights, descriptor)  # struct landlock_path_beneath_attr is packed
        _check(libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, rule, ctypes.c_uint32(0)),
               f"landlock_add_rule({place})")
    finally:
        os.close(descriptor)


def _filter_system_calls(libc, architecture: int, denied: tuple[int, ...]) -> None:
    """A classic-BPF program: wrong architecture or x32 call -> kill; a denied call -> EPERM; else allow."""
    count = len(denied)
    program = [
        (_LOAD, 0, 0, 4),                    # the call's architecture
        (_JUMP_EQUAL, 1, 0, architecture),
        (_RETURN, 0, 0, _RET_KILL),
        (_LOAD, 0, 0, 0),                    # the call's number
        (_JUMP_AT_LEAST, count + 2, 0, _X32_BIT),  # -> the kill at the end
    ]
    for index, number in enumerate(denied):
        program.append((_JUMP_EQUAL, count - index, 0, number))  # -> the EPERM return
    program += [(_RETURN, 0, 0, _RET_ALLOW), (_RETURN, 0, 0, _RET_EPERM), (_RETURN, 0, 0, _RET_KILL)]
    code = b"".join(struct.pack("HBBI", *instruction) for instruction in program)
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = struct.pack("HxxxxxxP", len(program), ctypes.addressof(buffer))  # struct sock_fprog
    _check(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, fprog, 0, 0), "seccomp")
