// "Copy as curl / Python" of the playground (components/dashboard/playground-snippets.ts): the shell
// and Python each read back exactly the JSON body the page sent, quotes, newlines and non-ASCII included.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { curlSnippet, pythonLiteral, pythonSnippet, typescriptSnippet } from '@/components/dashboard/playground-snippets';

const body = {
  model: 'claude-sonnet-4-5',
  messages: [
    { role: 'system', content: "It's a \"test\"\nwith 'quotes', $HOME, `ticks` and 你好 \\ backslash" },
    { role: 'user', content: 'Hi' },
  ],
  temperature: 0.3,
  max_tokens: 200,
  tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {}, additionalProperties: false, required: [] } } }],
  stream: true,
  stream_options: { include_usage: true },
  nothing: null,
};

describe('playground snippets', () => {
  it('curl: the shell passes the body through unchanged', () => {
    const curl = curlSnippet('http://gw.example', body);
    expect(curl.split('\n')[0]).toBe('curl http://gw.example/v1/chat/completions -N \\');
    expect(curl).toContain('Authorization: Bearer $GATEWAY_API_KEY');
    const quoted = curl.slice(curl.indexOf("-d '") + 3);
    const echoed = execFileSync('bash', ['-c', `printf %s ${quoted}`], { encoding: 'utf8' });
    expect(JSON.parse(echoed)).toEqual(body);
  });

  it('Python: the literal is the same value', () => {
    const out = execFileSync('python3', ['-c', `import json, sys; sys.stdout.write(json.dumps(${pythonLiteral(body)}))`], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual(body);
    const py = pythonSnippet('http://gw.example', body);
    expect(py).toContain('OpenAI(base_url="http://gw.example/v1", api_key=os.environ["GATEWAY_API_KEY"])');
    expect(py).toContain('client.chat.completions.create(**request)');
  });

  it('TypeScript: the body as an object literal, streamed or not', () => {
    const ts = typescriptSnippet('http://gw.example', body);
    expect(ts).toContain('apiKey: process.env.GATEWAY_API_KEY');
    const literal = ts.slice(ts.indexOf('create(') + 7, ts.lastIndexOf(');\nfor await'));
    expect(JSON.parse(literal)).toEqual(body);
    expect(typescriptSnippet('http://gw.example', { ...body, stream: false })).toContain('console.log(completion.choices[0]?.message.content);');
  });
});
