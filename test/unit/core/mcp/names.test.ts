import * as assert from 'node:assert/strict';
import { modelToolNames } from '../../../../src/core/mcp/names';

const VALID = /^[A-Za-z0-9_-]{1,64}$/;

describe('modelToolNames: what the model calls MCP tools', () => {
  it('names each tool mcp_<server>_<tool> and maps both ways', () => {
    const map = modelToolNames([
      { server: 'github', tools: ['create_issue', 'search-code'] },
      { server: 'fs', tools: ['read_file'] },
    ]);
    assert.deepEqual(map.names, ['mcp_fs_read_file', 'mcp_github_create_issue', 'mcp_github_search-code']);
    assert.deepEqual(map.resolve('mcp_github_create_issue'), { server: 'github', tool: 'create_issue' });
    assert.equal(map.modelName('fs', 'read_file'), 'mcp_fs_read_file');
    assert.equal(map.resolve('read_file'), undefined, "a built-in tool's name is never an MCP tool");
    assert.equal(map.modelName('fs', 'write_file'), undefined);
  });

  it('folds characters outside [A-Za-z0-9_-] to one _ each, emoji included', () => {
    const map = modelToolNames([{ server: 'my server/ü 🚀', tools: ['get.thing', 'a\nb'] }]);
    assert.deepEqual(map.names, ['mcp_my_server_____a_b', 'mcp_my_server_____get_thing']);
    for (const name of map.names) assert.match(name, VALID);
  });

  it('clips to 64 characters and makes a long clash unique within 64', () => {
    const long = 'x'.repeat(80);
    const map = modelToolNames([{ server: 'server', tools: [`${long}_alpha`, `${long}_beta`, `${long}_gamma`] }]);
    assert.equal(new Set(map.names).size, 3);
    for (const name of map.names) {
      assert.match(name, VALID);
      assert.ok(name.length <= 64);
    }
    assert.deepEqual(map.names, [`mcp_server_${'x'.repeat(53)}`, `mcp_server_${'x'.repeat(51)}_2`, `mcp_server_${'x'.repeat(51)}_3`]);
    assert.deepEqual(map.resolve(map.names[0] ?? ''), { server: 'server', tool: `${long}_alpha` });
    assert.deepEqual(map.resolve(map.names[2] ?? ''), { server: 'server', tool: `${long}_gamma` });
  });

  it('keeps two tools apart that fold to one name, in any case', () => {
    const map = modelToolNames([
      { server: 'a b', tools: ['t'] },
      { server: 'a_b', tools: ['t'] },
      { server: 'A_B', tools: ['t'] },
    ]);
    assert.equal(new Set(map.names.map((n) => n.toLowerCase())).size, 3);
    assert.equal(map.modelName('A_B', 't'), 'mcp_A_B_t');
    assert.equal(map.modelName('a b', 't'), 'mcp_a_b_t_2');
    assert.equal(map.modelName('a_b', 't'), 'mcp_a_b_t_3');
  });

  it('never gives a clashing tool the name another tool has naturally', () => {
    // "x y" and "x_y" clash on mcp_s_x_y; "x_y_2" is a real tool that must keep its own name.
    const map = modelToolNames([{ server: 's', tools: ['x y', 'x_y', 'x_y_2'] }]);
    assert.equal(map.modelName('s', 'x_y_2'), 'mcp_s_x_y_2');
    assert.equal(map.modelName('s', 'x y'), 'mcp_s_x_y');
    assert.equal(map.modelName('s', 'x_y'), 'mcp_s_x_y_3');
  });

  it('gives the same names whatever order the servers and tools are listed in', () => {
    const listing = [
      { server: 'b', tools: ['t', 'u u', 'u_u'] },
      { server: 'a', tools: ['t'] },
    ];
    const reversed = [...listing].reverse().map((s) => ({ server: s.server, tools: [...s.tools].reverse() }));
    const one = modelToolNames(listing);
    const two = modelToolNames(reversed);
    assert.deepEqual(one.names, two.names);
    for (const name of one.names) assert.deepEqual(one.resolve(name), two.resolve(name));
  });

  it('lists a tool a server names twice once', () => {
    assert.deepEqual(modelToolNames([{ server: 's', tools: ['t', 't'] }]).names, ['mcp_s_t']);
  });
});
