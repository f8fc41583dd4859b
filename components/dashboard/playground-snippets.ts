// "Copy as curl / Python / TypeScript" for the playground: the exact JSON body the page sent (or is
// about to send), to the same endpoint, with $GATEWAY_API_KEY where the key goes. Client-safe.

export type ChatBody = Record<string, unknown>;

/** A JSON value as a Python literal (True / False / None), indented like JSON.stringify(v, null, 4). */
export function pythonLiteral(value: unknown, depth = 0): string {
  const pad = '    '.repeat(depth + 1);
  const end = '    '.repeat(depth);
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number' || typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => pad + pythonLiteral(v, depth + 1)).join(',\n')}\n${end}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([k, v]) => `${pad}${JSON.stringify(k)}: ${pythonLiteral(v, depth + 1)}`).join(',\n')}\n${end}}`;
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

export function curlSnippet(base: string, body: ChatBody): string {
  return [
    `curl ${base}/v1/chat/completions${body.stream ? ' -N' : ''} \\`,
    `  -H "Authorization: Bearer $GATEWAY_API_KEY" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d ${shellQuote(JSON.stringify(body, null, 2))}`,
  ].join('\n');
}

export function pythonSnippet(base: string, body: ChatBody): string {
  const head = [
    'import os',
    'from openai import OpenAI',
    '',
    `client = OpenAI(base_url=${JSON.stringify(`${base}/v1`)}, api_key=os.environ["GATEWAY_API_KEY"])`,
    '',
  ];
  const request = `request = ${pythonLiteral(body)}`;
  const call = body.stream
    ? [
        'for chunk in client.chat.completions.create(**request):',
        '    if chunk.choices:',
        '        print(chunk.choices[0].delta.content or "", end="", flush=True)',
        'print()',
      ]
    : ['completion = client.chat.completions.create(**request)', 'print(completion.choices[0].message.content)'];
  return [...head, request, '', ...call].join('\n');
}

export function typescriptSnippet(base: string, body: ChatBody): string {
  const head = [
    "import OpenAI from 'openai';",
    '',
    `const client = new OpenAI({ baseURL: ${JSON.stringify(`${base}/v1`)}, apiKey: process.env.GATEWAY_API_KEY });`,
    '',
  ];
  const call = `const ${body.stream ? 'stream' : 'completion'} = await client.chat.completions.create(${JSON.stringify(body, null, 2)});`;
  const use = body.stream
    ? ["for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');", "process.stdout.write('\\n');"]
    : ['console.log(completion.choices[0]?.message.content);'];
  return [...head, call, ...use].join('\n');
}
