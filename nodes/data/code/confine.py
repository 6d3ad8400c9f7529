"""Confine the Code node's worker process before it reads a job: what the user's Python may touch.

Three unprivileged Linux features, applied by the worker to itself (standard library only, via
ctypes; worker.py imports this before its job arrives, so a warm call pays nothing for it):

- **no capabilities** (when the server runs as root) and `no_new_privs`: nothing gains rights back.
- **Landlock** (Linux >= 5.13): the worker reads only the interpreter's standard library, the
  system's shared libraries and time zones, and reads and writes only its scratch folder. The data
  folder, the source tree, other jobs' folders, `/proc` and `/etc` are out of reach, and so are
  other processes (a Landlock domain cannot ptrace or, from ABI 6, signal what is outside it).
- **seccomp**: system calls that reach beyond the process fail with EPERM: sockets (no network,
  no local database or Redis, no UNIX sockets), starting programs, creating processes (threads only),
  signalling, tracing, limiting or re-prioritising other processes (SIGIO owners included), leaving
  the process group, namespaces, mounts, io_uring, bpf, the kernel keyring, memfd and System V IPC
  (memory outside the memory limit; IPC objects also outlive the worker), and what Landlock does not
  cover: permissions, owners, times and extended attributes by path, and truncate by path.

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
_RET_ALLOW, _RET_KILL, _RET_EPERM, _RET_ENOSYS = 0x7FFF0000, 0x80000000, 0x00050000 | 1, 0x00050000 | 38
_LOAD, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ/JGE/JSET|K, BPF_RET|K
_NUMBER, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24  # offsets in struct seccomp_data (the low 32 bits of an argument)
_CLONE_THREAD = 0x00010000
_CLONE_NEW = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_SIGNAL_OWNER_FCNTL = (8, 10, 15)  # F_SETOWN, F_SETSIG, F_SETOWN_EX: SIGIO aimed at another process
_SIGNAL_OWNER_IOCTL = (0x8901, 0x8902)  # FIOSETOWN, SIOCSPGRP

# Refused outright (EPERM): what reaches beyond the process, or what Landlock does not cover (permissions,
# owners, times and extended attributes by path; truncate by path before Landlock ABI 3), or what escapes the
# memory limit (memfd; System V shared memory, message queues and semaphores, which also outlive the process
# and are shared with every process of the same user) or bothers other processes (scheduling, priority,
# memory placement).
_DENIED = (
    "socket", "execve", "execveat", "fork", "vfork", "ptrace", "process_vm_readv", "process_vm_writev",
    "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open", "pidfd_send_signal",
    "pidfd_getfd", "setsid", "setpgid", "unshare", "setns", "mount", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "bpf", "perf_event_open", "userfaultfd", "add_key", "request_key", "keyctl",
    "chmod", "fchmodat", "fchmodat2", "chown", "lchown", "fchownat", "utime", "utimes", "futimesat", "utimensat",
    "setxattr", "lsetxattr", "removexattr", "lremovexattr", "setxattrat", "removexattrat", "truncate",
    "memfd_create", "memfd_secret", "sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr",
    "setpriority", "ioprio_set", "migrate_pages", "move_pages",
    "shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop",
    "semtimedop", "semctl",
)
# The same on every architecture (system calls added since Linux 5.1 share one numbering).
_COMMON = {"pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
           "pidfd_open": 434, "clone3": 435, "pidfd_getfd": 438, "memfd_secret": 447, "fchmodat2": 452,
           "setxattrat": 463, "removexattrat": 466}
_MACHINES = {  # audit architecture, system call numbers (a name missing here does not exist there)
    "x86_64": (0xC000003E, {
        **_COMMON, "ioctl": 16, "shmget": 29, "shmat": 30, "shmctl": 31, "clone": 56, "fork": 57, "vfork": 58,
        "execve": 59, "kill": 62, "semget": 64, "semop": 65, "semctl": 66, "shmdt": 67, "msgget": 68,
        "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "fcntl": 72,
        "truncate": 76, "chmod": 90, "chown": 92, "lchown": 94, "ptrace": 101, "setpgid": 109, "setsid": 112,
        "rt_sigqueueinfo": 129, "utime": 132, "setpriority": 141, "sched_setparam": 142,
        "sched_setscheduler": 144, "mount": 165, "setxattr": 188, "lsetxattr": 189, "removexattr": 197,
        "lremovexattr": 198, "tkill": 200, "sched_setaffinity": 203, "semtimedop": 220, "tgkill": 234,
        "utimes": 235,
        "add_key": 248, "request_key": 249, "keyctl": 250, "ioprio_set": 251, "migrate_pages": 256,
        "fchownat": 260, "futimesat": 261, "fchmodat": 268, "unshare": 272, "move_pages": 279, "utimensat": 280,
        "rt_tgsigqueueinfo": 297, "perf_event_open": 298, "prlimit64": 302, "setns": 308,
        "process_vm_readv": 310, "process_vm_writev": 311, "sched_setattr": 314, "memfd_create": 319,
        "bpf": 321, "execveat": 322, "userfaultfd": 323, "socket": 41}),
    "aarch64": (0xC00000B7, {
        **_COMMON, "setxattr": 5, "lsetxattr": 6, "removexattr": 14, "lremovexattr": 15, "fcntl": 25,
        "ioctl": 29, "ioprio_set": 30, "mount": 40, "truncate": 45, "fchmodat": 53, "fchownat": 54,
        "utimensat": 88, "unshare": 97, "ptrace": 117, "sched_setparam": 118, "sched_setscheduler": 119,
        "sched_setaffinity": 122, "kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138,
        "setpriority": 140, "setpgid": 154, "setsid": 157, "msgget": 186, "msgctl": 187, "msgrcv": 188,
        "msgsnd": 189, "semget": 190, "semctl": 191, "semtimedop": 192, "semop": 193, "shmget": 194,
        "shmctl": 195, "shmat": 196, "shmdt": 197, "socket": 198, "add_key": 217, "request_key": 218,
        "keyctl": 219, "clone": 220, "execve": 221, "migrate_pages": 238, "move_pages": 239,
        "rt_tgsigqueueinfo": 240, "perf_event_open": 241, "prlimit64": 261, "setns": 268,
        "process_vm_readv": 270, "process_vm_writev": 271, "sched_setattr": 274, "memfd_create": 279,
        "bpf": 280, "execveat": 281, "userfaultfd": 282}),
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
    # Not sys.base_prefix nor /usr/local/lib: on a Docker or conda Python they hold every installed package.
    # (Where site-packages lies inside the stdlib folder, as on python:3.x images, it stays readable.)
    places = {paths["stdlib"], paths["platstdlib"], os.path.join(paths["platstdlib"], "lib-dynload"),
              "/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/share/zoneinfo", "/etc/localtime",
              "/dev/null", "/dev/zero", "/dev/urandom"}
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


def _filter_system_calls(libc, architecture: int, numbers: dict[str, int]) -> None:
    """A classic-BPF program (see `_program`), installed for good."""
    program = _program(architecture, numbers)
    code = b"".join(struct.pack("HBBI", *instruction) for instruction in program)
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = struct.pack("HxxxxxxP", len(program), ctypes.addressof(buffer))  # struct sock_fprog
    _check(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, fprog, 0, 0), "seccomp")


def _program(architecture: int, numbers: dict[str, int]) -> list[tuple[int, int, int, int]]:
    """Another architecture, or an x32 call: kill. A `_DENIED` call: EPERM. clone3: ENOSYS (the C library then
    uses clone, whose flags can be read). clone: threads only (no fork, no new namespaces). prlimit64: this
    process only. fcntl / ioctl: not setting who gets a file's SIGIO. Everything else: allowed."""
    code: list[tuple] = [(_LOAD, _ARCH), (_JEQ, architecture, None, "kill"), (_LOAD, _NUMBER)]
    if architecture == _MACHINES["x86_64"][0]:
        code.append((_JGE, _X32_BIT, "kill", None))
    code += [(_JEQ, numbers[name], "eperm", None) for name in _DENIED if name in numbers]
    code += [(_JEQ, numbers["clone3"], "enosys", None), (_JEQ, numbers["prlimit64"], "prlimit", None),
             (_JEQ, numbers["clone"], "clone", None), (_JEQ, numbers["fcntl"], "fcntl", None),
             (_JEQ, numbers["ioctl"], "ioctl", None), (_RET, _RET_ALLOW),
             "prlimit", (_LOAD, _ARG0), (_JEQ, 0, "allow", "eperm"),
             "clone", (_LOAD, _ARG0), (_JSET, _CLONE_THREAD, None, "eperm"), (_JSET, _CLONE_NEW, "eperm", "allow"),
             "fcntl", (_LOAD, _ARG1), *[(_JEQ, command, "eperm", None) for command in _SIGNAL_OWNER_FCNTL],
             (_RET, _RET_ALLOW),
             "ioctl", (_LOAD, _ARG1), *[(_JEQ, command, "eperm", None) for command in _SIGNAL_OWNER_IOCTL],
             "allow", (_RET, _RET_ALLOW), "eperm", (_RET, _RET_EPERM), "enosys", (_RET, _RET_ENOSYS),
             "kill", (_RET, _RET_KILL)]
    return _assemble(code)


def _assemble(code: list) -> list[tuple[int, int, int, int]]:
    """(op, k) and (jump, k, target if true, target if false) with label targets (None: the next) to BPF."""
    labels, instructions = {}, []
    for item in code:
        if isinstance(item, str):
            labels[item] = len(instructions)
        else:
            instructions.append(item)
    program = []
    for index, item in enumerate(instructions):
        if len(item) == 2:
            program.append((item[0], 0, 0, item[1]))
        else:
            op, k, if_true, if_false = item
            offsets = [labels[t] - index - 1 if t is not None else 0 for t in (if_true, if_false)]
            assert all(0 <= offset < 256 for offset in offsets), "a BPF jump goes backwards or too far"
            program.append((op, offsets[0], offsets[1], k))
    return program
