'use client';

import { useState } from 'react';
import { CodeBlock } from '@/components/ui/code-block';
import { cn } from '@/components/ui/cn';
import { useT } from '@/lib/i18n/client';

type Lang = 'curl' | 'python' | 'javascript' | 'stream';

const LABELS: Record<Lang, string> = { curl: 'curl', python: 'Python', javascript: 'JavaScript', stream: 'Streaming (curl)' };

/** Ready-to-paste first calls with the new key filled in: what a user runs next. */
export function snippets(baseUrl: string, key: string, model: string): Record<Lang, string> {
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello!' }] });
  return {
    curl: `curl ${baseUrl}/chat/completions \\\n  -H "Authorization: Bearer ${key}" \\\n  -H "Content-Type: application/json" \\\n  -d '${body}'`,
    python: `from openai import OpenAI\n\nclient = OpenAI(base_url="${baseUrl}", api_key="${key}")\nreply = client.chat.completions.create(\n    model="${model}",\n    messages=[{"role": "user", "content": "Hello!"}],\n)\nprint(reply.choices[0].message.content)`,
    javascript: `import OpenAI from 'openai';\n\nconst client = new OpenAI({ baseURL: '${baseUrl}', apiKey: '${key}' });\nconst reply = await client.chat.completions.create({\n  model: '${model}',\n  messages: [{ role: 'user', content: 'Hello!' }],\n});\nconsole.log(reply.choices[0].message.content);`,
    stream: `curl -N ${baseUrl}/chat/completions \\\n  -H "Authorization: Bearer ${key}" \\\n  -H "Content-Type: application/json" \\\n  -d '${JSON.stringify({ model, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hello!' }] })}'`,
  };
}

export function KeySnippets({ baseUrl, apiKey, model }: { baseUrl: string; apiKey: string; model: string }) {
  const t = useT();
  const [lang, setLang] = useState<Lang>('curl');
  const label = (l: Lang) => (l === 'stream' ? t('Streaming (curl)') : LABELS[l]);
  const code = snippets(baseUrl, apiKey, model);
  return (
    <div className="mt-4" data-testid="key-snippets">
      <div role="tablist" aria-label={t('First call')} className="mb-2 flex flex-wrap gap-1">
        {(Object.keys(LABELS) as Lang[]).map((l) => (
          <button
            key={l}
            type="button"
            role="tab"
            aria-selected={lang === l}
            onClick={() => setLang(l)}
            className={cn('rounded-md px-2.5 py-1 text-xs font-medium', lang === l ? 'bg-amber-900 text-white' : 'text-amber-950 hover:bg-amber-100')}
          >
            {label(l)}
          </button>
        ))}
      </div>
      <CodeBlock code={code[lang]} label={label(lang)} />
    </div>
  );
}
