/**
 * The seccomp filter of every sandboxed gate command (docs/architecture.md,
 * "Sandbox"): a classic BPF program, built here byte by byte, that bubblewrap
 * loads with `--seccomp FD` just before it starts the command. No native
 * module and no libseccomp: the program is small enough to write out.
 *
 * It refuses, with EPERM, the system calls a build or a test has no use for
 * and that reach state shared with the host: the keyrings, namespaces and
 * mounts (old and new mount API), kernel modules and kexec, BPF and perf,
 * userfaultfd, io_uring, swap, reboot, the clock, file handles, accounting,
 * quotas, raw I/O ports, the kernel's log (`syslog`, refused here whatever
 * `kernel.dmesg_restrict` says). `clone3` gets ENOSYS, so libc falls back to
 * `clone`, whose flags a classic filter can read (those of `clone3` sit
 * behind a pointer); `clone` asking for a new namespace gets EPERM. A socket
 * (or socket pair) of any family but `AF_UNIX`, `AF_INET`, `AF_INET6` and
 * `AF_NETLINK` gets EAFNOSUPPORT, what a kernel without that family answers:
 * `AF_VSOCK` reaches the hypervisor past the network namespace, `AF_PACKET`
 * and the rest are kernel code no build or test needs. Everything else is
 * allowed.
 *
 * Only the x86_64 and aarch64 system call tables are known. A call made
 * through any other ABI (i386 `int 0x80` on x86_64, arm32 compat on aarch64)
 * kills the process: each of that ABI's calls would have to be listed again,
 * and a process that gets a refusal for every call cannot do anything useful
 * with it. An x32 call number (bit 30 set, on x86_64) gets EPERM, like a
 * refused call, so the x32 aliases of the calls above stay closed even on a
 * kernel built with x32.
 */

export type SeccompArch = 'x86_64' | 'aarch64';

/** `AUDIT_ARCH_*` from linux/audit.h, as `seccomp_data.arch` reports them. */
export const AUDIT_ARCH: Readonly<Record<SeccompArch, number>> = { x86_64: 0xc000003e, aarch64: 0xc00000b7 };

/** x86_64's x32 ABI marks its call numbers with this bit. */
export const X32_SYSCALL_BIT = 0x40000000;

/** Namespace flags of `clone` (linux/sched.h). CLONE_NEWTIME is left out: in `clone` that bit is part of the exit signal. */
export const CLONE_NAMESPACE_FLAGS = 0x00020000 /* NEWNS */ | 0x02000000 /* NEWCGROUP */ | 0x04000000 /* NEWUTS */ | 0x08000000 /* NEWIPC */ | 0x10000000 /* NEWUSER */ | 0x20000000 /* NEWPID */ | 0x40000000; /* NEWNET */

export const EPERM = 1;
export const ENOSYS = 38;
export const EAFNOSUPPORT = 97;

/** The socket families a command may open (linux/socket.h): local sockets, IPv4, IPv6, and netlink (getaddrinfo and getifaddrs need it). */
export const ALLOWED_SOCKET_FAMILIES = { AF_UNIX: 1, AF_INET: 2, AF_INET6: 10, AF_NETLINK: 16 } as const;

export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ERRNO = 0x00050000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;

/** The refused calls, by name; each table below gives their numbers. */
export const REFUSED_CALLS = [
  'keyctl', 'add_key', 'request_key',
  'bpf', 'perf_event_open', 'userfaultfd',
  'kexec_load', 'kexec_file_load', 'init_module', 'finit_module', 'delete_module',
  'mount', 'umount2', 'pivot_root', 'open_tree', 'move_mount', 'fsopen', 'fsconfig', 'fsmount', 'fspick', 'mount_setattr',
  'swapon', 'swapoff', 'reboot',
  'setns', 'unshare',
  'open_by_handle_at', 'name_to_handle_at',
  'acct', 'quotactl', 'quotactl_fd',
  'settimeofday', 'clock_settime', 'clock_adjtime',
  'iopl', 'ioperm',
  'io_uring_setup', 'io_uring_enter', 'io_uring_register',
  'syslog',
] as const;

export type RefusedCall = (typeof REFUSED_CALLS)[number];

interface CallTable {
  /** Undefined: the call does not exist on that architecture (iopl and ioperm are x86 only). */
  readonly refused: Readonly<Record<RefusedCall, number | undefined>>;
  readonly clone: number;
  readonly clone3: number;
  /** `socket` and `socketpair`, whose first argument is the family. */
  readonly socket: number;
  readonly socketpair: number;
}

/** From the kernel's arch/x86/entry/syscalls/syscall_64.tbl and include/uapi/asm-generic/unistd.h. */
export const CALLS: Readonly<Record<SeccompArch, CallTable>> = {
  x86_64: {
    refused: {
      keyctl: 250, add_key: 248, request_key: 249, bpf: 321, perf_event_open: 298, userfaultfd: 323,
      kexec_load: 246, kexec_file_load: 320, init_module: 175, finit_module: 313, delete_module: 176,
      mount: 165, umount2: 166, pivot_root: 155, open_tree: 428, move_mount: 429, fsopen: 430, fsconfig: 431, fsmount: 432, fspick: 433, mount_setattr: 442,
      swapon: 167, swapoff: 168, reboot: 169, setns: 308, unshare: 272, open_by_handle_at: 304, name_to_handle_at: 303,
      acct: 163, quotactl: 179, quotactl_fd: 443, settimeofday: 164, clock_settime: 227, clock_adjtime: 305,
      iopl: 172, ioperm: 173, io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, syslog: 103,
    },
    clone: 56,
    clone3: 435,
    socket: 41,
    socketpair: 53,
  },
  aarch64: {
    refused: {
      keyctl: 219, add_key: 217, request_key: 218, bpf: 280, perf_event_open: 241, userfaultfd: 282,
      kexec_load: 104, kexec_file_load: 294, init_module: 105, finit_module: 273, delete_module: 106,
      mount: 40, umount2: 39, pivot_root: 41, open_tree: 428, move_mount: 429, fsopen: 430, fsconfig: 431, fsmount: 432, fspick: 433, mount_setattr: 442,
      swapon: 224, swapoff: 225, reboot: 142, setns: 268, unshare: 97, open_by_handle_at: 265, name_to_handle_at: 264,
      acct: 89, quotactl: 60, quotactl_fd: 443, settimeofday: 170, clock_settime: 112, clock_adjtime: 266,
      iopl: undefined, ioperm: undefined, io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, syslog: 116,
    },
    clone: 220,
    clone3: 435,
    socket: 198,
    socketpair: 199,
  },
};

/** The architecture of this process, when the filter knows it. */
export function seccompArch(arch: string = process.arch): SeccompArch | undefined {
  return arch === 'x64' ? 'x86_64' : arch === 'arm64' ? 'aarch64' : undefined;
}

// Classic BPF opcodes (linux/bpf_common.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;

/** `struct seccomp_data` offsets: nr, arch, then args[6] as u64 from 16; the low half comes first on these little-endian machines. */
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;

type Label = 'x86_64' | 'aarch64' | 'clone' | 'socket' | 'allow' | 'eperm' | 'enosys';

interface Instruction {
  readonly code: number;
  readonly k: number;
  /** Where a conditional jump goes when true; false falls through. */
  readonly jt?: Label;
}

let assembled: Buffer | undefined;

/** The filter, as bubblewrap reads it: `struct sock_filter[]` in this machine's byte order (little-endian on both architectures). */
export function gateSeccompProgram(): Buffer {
  assembled ??= assemble(program());
  return assembled;
}

function program(): Array<Instruction | Label> {
  return [
    { code: LD_W_ABS, k: ARCH },
    { code: JEQ_K, k: AUDIT_ARCH.x86_64, jt: 'x86_64' },
    { code: JEQ_K, k: AUDIT_ARCH.aarch64, jt: 'aarch64' },
    { code: RET_K, k: SECCOMP_RET_KILL_PROCESS },
    ...archSection('x86_64'),
    ...archSection('aarch64'),
    'clone',
    { code: LD_W_ABS, k: ARG0_LOW },
    { code: JSET_K, k: CLONE_NAMESPACE_FLAGS, jt: 'eperm' },
    { code: RET_K, k: SECCOMP_RET_ALLOW },
    // The family is an int: the kernel reads the low half of the register only.
    'socket',
    { code: LD_W_ABS, k: ARG0_LOW },
    ...Object.values(ALLOWED_SOCKET_FAMILIES).map((family) => ({ code: JEQ_K, k: family, jt: 'allow' as const })),
    { code: RET_K, k: SECCOMP_RET_ERRNO | EAFNOSUPPORT },
    'allow',
    { code: RET_K, k: SECCOMP_RET_ALLOW },
    'eperm',
    { code: RET_K, k: SECCOMP_RET_ERRNO | EPERM },
    'enosys',
    { code: RET_K, k: SECCOMP_RET_ERRNO | ENOSYS },
  ];
}

function archSection(arch: SeccompArch): Array<Instruction | Label> {
  const table = CALLS[arch];
  const refused = REFUSED_CALLS.map((name) => table.refused[name]).filter((nr): nr is number => nr !== undefined);
  return [
    arch,
    { code: LD_W_ABS, k: NR },
    ...(arch === 'x86_64' ? [{ code: JGE_K, k: X32_SYSCALL_BIT, jt: 'eperm' as const }] : []),
    { code: JEQ_K, k: table.clone3, jt: 'enosys' },
    { code: JEQ_K, k: table.clone, jt: 'clone' },
    { code: JEQ_K, k: table.socket, jt: 'socket' },
    { code: JEQ_K, k: table.socketpair, jt: 'socket' },
    ...refused.map((nr) => ({ code: JEQ_K, k: nr, jt: 'eperm' as const })),
    { code: RET_K, k: SECCOMP_RET_ALLOW },
  ];
}

/** Resolves the labels to relative jumps (at most 255 forward, as classic BPF allows) and writes the instructions out. */
function assemble(program: ReadonlyArray<Instruction | Label>): Buffer {
  const at = new Map<Label, number>();
  const instructions: Instruction[] = [];
  for (const item of program) {
    if (typeof item === 'string') at.set(item, instructions.length);
    else instructions.push(item);
  }
  const out = Buffer.alloc(instructions.length * 8);
  instructions.forEach((instruction, pc) => {
    let jt = 0;
    if (instruction.jt !== undefined) {
      const target = at.get(instruction.jt);
      if (target === undefined || target <= pc || target - pc - 1 > 255) throw new Error(`seccomp program: jump from ${pc} to ${instruction.jt} cannot be encoded`);
      jt = target - pc - 1;
    }
    out.writeUInt16LE(instruction.code, pc * 8);
    out.writeUInt8(jt, pc * 8 + 2);
    out.writeUInt8(0, pc * 8 + 3);
    out.writeUInt32LE(instruction.k >>> 0, pc * 8 + 4);
  });
  return out;
}
