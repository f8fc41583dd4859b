// The @google/genai SDK as an application uses it for a tool loop (httpOptions.baseUrl = the
// gateway's Gemini surface): the model is asked for the file task with a `write_file` function
// declared, the call it makes is run here, its result sent back, and the final answer streamed.
// The SDK is loaded from the runner's scratch folder (the pinned version), not the repo's copy.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { fileTaskPrompt } from '../../../tests/support/file-task';
import type { CompatClient, CompatContext } from '../types';

const VERSION = '3.3.0';

type GenAI = typeof import('@google/genai');

const WRITE_FILE = {
  name: 'write_file',
  description: 'Writes content to a file.',
  parametersJsonSchema: {
    type: 'object',
    properties: { file_path: { type: 'string' }, content: { type: 'string' } },
    required: ['file_path', 'content'],
  },
};

const googleGenai: CompatClient = {
  name: 'google-genai',
  version: VERSION,
  packages: [`@google/genai@${VERSION}`],
  async run(ctx: CompatContext) {
    const entry = path.join(ctx.clientsDir, 'node_modules', '@google', 'genai', 'dist', 'node', 'index.mjs');
    const { GoogleGenAI } = (await import(pathToFileURL(entry).href)) as GenAI;
    const ai = new GoogleGenAI({ apiKey: ctx.apiKey, httpOptions: { baseUrl: `${ctx.baseUrl}/v1/gemini`, retryOptions: { attempts: 1 } } });
    const file = path.join(ctx.workdir, 'hello.txt');
    const config = { tools: [{ functionDeclarations: [WRITE_FILE] }] };
    const ask = { role: 'user', parts: [{ text: fileTaskPrompt(file) }] };
    const first = await ai.models.generateContent({ model: ctx.model, contents: [ask], config });
    const call = first.functionCalls?.[0];
    if (call?.name !== 'write_file')
      return { ok: false, detail: `no write_file call: ${JSON.stringify(first.candidates?.[0]?.content ?? null).slice(0, 150)}` };
    const args = call.args as { file_path?: string; content?: string };
    if (typeof args.file_path !== 'string' || typeof args.content !== 'string') return { ok: false, detail: `bad arguments ${JSON.stringify(args)}` };
    writeFileSync(args.file_path, args.content);
    const stream = await ai.models.generateContentStream({
      model: ctx.model,
      contents: [
        ask,
        first.candidates![0].content!,
        { role: 'user', parts: [{ functionResponse: { id: call.id, name: call.name, response: { output: 'written' } } }] },
      ],
      config,
    });
    let text = '';
    let finish: string | undefined;
    for await (const chunk of stream) {
      text += chunk.text ?? '';
      finish = chunk.candidates?.[0]?.finishReason ?? finish;
    }
    if (!existsSync(file) || readFileSync(file, 'utf8').trim() !== 'hello') return { ok: false, detail: 'no file' };
    const counted = await ai.models.countTokens({ model: ctx.model, contents: [ask] });
    return finish === 'STOP' && text !== '' && (counted.totalTokens ?? 0) > 0
      ? { ok: true, detail: 'file written, answer streamed, tokens counted' }
      : { ok: false, detail: `file written; stream ended ${finish} with ${JSON.stringify(text.slice(0, 80))}, countTokens ${counted.totalTokens}` };
  },
};

export default googleGenai;
