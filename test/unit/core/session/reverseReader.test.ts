import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { linesBackward, withFile, type FileLine } from '../../../../src/core/session/reverseReader';
import { bytesReadSoFar } from '../../../helpers/bytesRead';

describe('reading a file\'s lines from its end', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-reverse-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  function backward(content: string | Buffer, chunk: number): FileLine[] {
    const file = path.join(dir, 'f.jsonl');
    fs.writeFileSync(file, content);
    return withFile(file, [], (fd) => [...linesBackward(fd, fs.fstatSync(fd).size, chunk)]);
  }

  it('gives the lines newest first, whatever the chunk size, with where each starts', () => {
    const lines = ['{"a":1}', 'ünïcödé ✓ 漢字 and more', '', 'x'.repeat(300), '🙂 emoji split across chunks 🙂', 'last'];
    const content = `${lines.join('\n')}\n`;
    const expected = lines.filter((l) => l !== '').reverse();
    for (const chunk of [1, 2, 3, 5, 7, 64, 1024, 65536]) {
      const got = backward(content, chunk);
      assert.deepEqual(got.map((l) => l.text), expected, `chunk ${chunk}`);
      for (const line of got) {
        assert.equal(Buffer.from(content).subarray(line.start).toString('utf8').split('\n')[0], line.text, `chunk ${chunk}: start of "${line.text.slice(0, 10)}"`);
        assert.equal(line.terminated, true);
      }
    }
  });

  it('marks bytes after the last newline as an unterminated line, and strips a CR', () => {
    for (const chunk of [1, 4, 1024]) {
      const got = backward('one\r\ntwo\n{"cut', chunk);
      assert.deepEqual(got.map((l) => [l.text, l.terminated]), [['{"cut', false], ['two', true], ['one', true]], `chunk ${chunk}`);
    }
    assert.deepEqual(backward('only line, no newline', 3).map((l) => [l.text, l.terminated, l.start]), [['only line, no newline', false, 0]]);
  });

  it('reads nothing of an empty file, and a missing file reads as missing', () => {
    assert.deepEqual(backward('', 16), []);
    assert.deepEqual(backward('\n\n\n', 2), []);
    assert.equal(withFile(path.join(dir, 'absent'), 'missing', () => 'read'), 'missing');
  });

  it('stops reading where the caller stops: the start of a 256 MiB file is never read', function () {
    // A sparse file: a hole of 256 MiB (never written, no newline in it) before two lines.
    const file = path.join(dir, 'huge.jsonl');
    const hole = 256 * 1024 * 1024;
    fs.writeFileSync(file, '');
    fs.truncateSync(file, hole);
    fs.appendFileSync(file, '\nsecond to last\nlast\n');
    const readBefore = bytesReadSoFar();
    const got = withFile(file, [], (fd) => {
      const out: string[] = [];
      for (const line of linesBackward(fd)) {
        out.push(line.text);
        if (out.length === 2) break;
      }
      return out;
    });
    assert.deepEqual(got, ['last', 'second to last']);
    const readBytes = bytesReadSoFar() - readBefore;
    assert.ok(readBytes < 1024 * 1024, `read ${readBytes} bytes of a file whose last 21 bytes were asked for`);
  });
});
