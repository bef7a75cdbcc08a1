import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { skipUnless } from '../../../helpers/preconditions';
import {
  ALLOWED_SOCKET_FAMILIES,
  AUDIT_ARCH,
  CALLS,
  CLONE_NAMESPACE_FLAGS,
  EAFNOSUPPORT,
  ENOSYS,
  EPERM,
  REFUSED_CALLS,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
  X32_SYSCALL_BIT,
  gateSeccompProgram,
  type SeccompArch,
} from '../../../../src/core/sandbox/seccomp';

/**
 * The seccomp program, decoded and run here over synthetic `seccomp_data`
 * by a small classic-BPF interpreter, for every entry of the tables on both
 * architectures. What the kernel does with it is shown in sandboxRoot.test.ts.
 */

interface SeccompData {
  readonly nr: number;
  readonly arch: number;
  readonly args?: readonly bigint[];
}

/** Runs the program the way the kernel's classic BPF does; throws on an instruction this filter should never contain, or on running off its end. */
function run(program: Buffer, data: SeccompData): number {
  const packet = Buffer.alloc(64);
  packet.writeInt32LE(data.nr | 0, 0);
  packet.writeUInt32LE(data.arch >>> 0, 4);
  for (const [i, arg] of (data.args ?? []).entries()) packet.writeBigUInt64LE(arg, 16 + 8 * i);
  const count = program.length / 8;
  let accumulator = 0;
  for (let pc = 0, steps = 0; steps < 4096; steps++) {
    if (pc >= count) throw new Error(`ran off the end at ${pc}`);
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    switch (code) {
      case 0x20: // ld [k]
        if (k % 4 !== 0 || k > 60) throw new Error(`bad load offset ${k}`);
        accumulator = packet.readUInt32LE(k);
        pc += 1;
        break;
      case 0x15: // jeq #k
        pc += 1 + (accumulator === k ? jt : jf);
        break;
      case 0x35: // jge #k
        pc += 1 + (accumulator >= k ? jt : jf);
        break;
      case 0x45: // jset #k
        pc += 1 + ((accumulator & k) >>> 0 !== 0 ? jt : jf);
        break;
      case 0x06: // ret #k
        return k;
      default:
        throw new Error(`unexpected opcode 0x${code.toString(16)} at ${pc}`);
    }
  }
  throw new Error('no return');
}

const ARCHES: readonly SeccompArch[] = ['x86_64', 'aarch64'];
const errno = (value: number): number => SECCOMP_RET_ERRNO | value;
/** A few calls every program makes, by number: read, write, openat, execve, exit_group. */
const EVERYDAY: Readonly<Record<SeccompArch, readonly number[]>> = { x86_64: [0, 1, 257, 59, 231], aarch64: [63, 64, 56, 221, 94] };
const SIGCHLD = 17n;
/** What glibc's pthread_create passes to clone: no namespace among them. */
const THREAD_FLAGS = 0x003d0f00n;

describe('the gate\'s seccomp filter, decoded', () => {
  const program = gateSeccompProgram();

  it('is a whole program: at most 4096 instructions, every path ends in a return', () => {
    assert.equal(program.length % 8, 0);
    assert.ok(program.length / 8 <= 4096);
    // Every instruction is reachable by some input below; the interpreter throws on a path that runs off the end.
    assert.ok(program.readUInt16LE(program.length - 8) === 0x06, 'the last instruction returns');
  });

  for (const arch of ARCHES) {
    describe(arch, () => {
      const table = CALLS[arch];
      const call = (nr: number, args?: readonly bigint[]): number => run(program, { nr, arch: AUDIT_ARCH[arch], args });

      it('every refused call gets EPERM, never a kill', () => {
        for (const name of REFUSED_CALLS) {
          const nr = table.refused[name];
          if (nr === undefined) continue;
          assert.equal(call(nr), errno(EPERM), `${name} (${nr})`);
        }
      });

      it('everyday calls are allowed', () => {
        for (const nr of EVERYDAY[arch]) assert.equal(call(nr), SECCOMP_RET_ALLOW, String(nr));
      });

      it('clone3 gets ENOSYS, so libc falls back to clone', () => {
        assert.equal(call(table.clone3), errno(ENOSYS));
      });

      it('clone: a fork or a thread is allowed; each namespace flag, alone or beside others, is EPERM', () => {
        assert.equal(call(table.clone, [SIGCHLD]), SECCOMP_RET_ALLOW, 'fork');
        assert.equal(call(table.clone, [THREAD_FLAGS]), SECCOMP_RET_ALLOW, 'pthread_create');
        for (let bit = 0; bit < 32; bit++) {
          const flag = 1 << bit;
          if ((CLONE_NAMESPACE_FLAGS & flag) === 0) continue;
          assert.equal(call(table.clone, [BigInt(flag >>> 0)]), errno(EPERM), `flag 0x${(flag >>> 0).toString(16)}`);
          assert.equal(call(table.clone, [BigInt(flag >>> 0) | THREAD_FLAGS | SIGCHLD]), errno(EPERM), `flag 0x${(flag >>> 0).toString(16)} among others`);
        }
        // The kernel reads only the low 32 bits of clone's flags: the high half changes nothing.
        assert.equal(call(table.clone, [SIGCHLD | (0xffffffffn << 32n)]), SECCOMP_RET_ALLOW);
      });

      it('socket and socketpair: AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK are allowed; every other family (AF_VSOCK, AF_PACKET, …) gets EAFNOSUPPORT', () => {
        const allowed = new Set<number>(Object.values(ALLOWED_SOCKET_FAMILIES));
        assert.deepEqual([...allowed].sort((a, b) => a - b), [1, 2, 10, 16]);
        for (const nr of [table.socket, table.socketpair]) {
          // Every family Linux knows (AF_MAX is 46), and a few it does not.
          for (const family of [...Array(46).keys(), 46, 255, 0x7fffffff, -1]) {
            const expected = allowed.has(family) ? SECCOMP_RET_ALLOW : errno(EAFNOSUPPORT);
            assert.equal(call(nr, [BigInt.asUintN(64, BigInt(family))]), expected, `${nr === table.socket ? 'socket' : 'socketpair'}(${family})`);
          }
          // The family is an int: the high half of the register is not part of it.
          assert.equal(call(nr, [(1n << 32n) | 2n]), SECCOMP_RET_ALLOW);
          assert.equal(call(nr, [(2n << 32n) | 40n]), errno(EAFNOSUPPORT), 'AF_VSOCK with a high half that reads as AF_INET');
        }
      });
    });
  }

  it('the namespace flags are the seven of clone (CLONE_NEWTIME is part of the exit signal there)', () => {
    assert.equal(CLONE_NAMESPACE_FLAGS, 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000);
    assert.equal(CLONE_NAMESPACE_FLAGS & 0xff, 0);
  });

  it('iopl and ioperm exist only on x86_64; their x86 numbers are ordinary calls on aarch64', () => {
    assert.equal(CALLS.aarch64.refused.iopl, undefined);
    assert.equal(CALLS.aarch64.refused.ioperm, undefined);
    // 172 and 173 are getpid and getppid on aarch64.
    assert.equal(run(program, { nr: 172, arch: AUDIT_ARCH.aarch64 }), SECCOMP_RET_ALLOW);
    assert.equal(run(program, { nr: 172, arch: AUDIT_ARCH.x86_64 }), errno(EPERM));
  });

  it('x32 call numbers on x86_64 are refused (EPERM), whatever call they alias', () => {
    for (const nr of [0, 1, CALLS.x86_64.refused.keyctl ?? 0, 512, 547]) {
      assert.equal(run(program, { nr: X32_SYSCALL_BIT + nr, arch: AUDIT_ARCH.x86_64 }), errno(EPERM), String(nr));
    }
    // -1 (a tracer skipping a call) is above the x32 bit too.
    assert.equal(run(program, { nr: -1, arch: AUDIT_ARCH.x86_64 }), errno(EPERM));
  });

  it('any other ABI kills the process: i386 and arm32 compat calls, an unknown arch', () => {
    const i386 = 0x40000003;
    const arm = 0x40000028;
    for (const arch of [i386, arm, 0xc00000f3 /* riscv64 */, 0]) {
      for (const nr of [0, 1, 11, 120]) assert.equal(run(program, { nr, arch }), SECCOMP_RET_KILL_PROCESS, `arch 0x${arch.toString(16)} nr ${nr}`);
    }
  });

  it("the tables match the kernel headers of this machine, where they are installed", function () {
    const headers: ReadonlyArray<[SeccompArch, string, RegExp]> = [
      ['x86_64', '/usr/include/x86_64-linux-gnu/asm/unistd_64.h', /^#define __NR_(\w+)\s+(\d+)$/],
      ['aarch64', '/usr/include/asm-generic/unistd.h', /^#define __NR(?:3264)?_(\w+)\s+(\d+)$/],
    ];
    let checked = 0;
    for (const [arch, file, pattern] of headers) {
      if (!fs.existsSync(file)) continue;
      const numbers = new Map<string, number>();
      for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
        const match = pattern.exec(line.trim());
        if (match?.[1] !== undefined) numbers.set(match[1], Number(match[2]));
      }
      const table = CALLS[arch];
      for (const name of REFUSED_CALLS) assert.equal(table.refused[name], numbers.get(name), `${arch} ${name}`);
      assert.equal(table.clone, numbers.get('clone'));
      assert.equal(table.clone3, numbers.get('clone3'));
      assert.equal(table.socket, numbers.get('socket'));
      assert.equal(table.socketpair, numbers.get('socketpair'));
      checked++;
    }
    skipUnless(this, checked === 0 ? `no kernel headers with system call numbers here (${headers.map(([, file]) => file).join(', ')}; Debian's linux-libc-dev)` : undefined);
  });
});
