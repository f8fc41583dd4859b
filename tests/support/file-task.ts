// The compatibility runner's task (`npm run compat`): the prompt asks a coding agent to create one
// file, and a fake upstream in `fileTask` mode answers with ONE tool call that creates it, picked by
// the tool names the agent declared. Each client's file-writing tool has its entry in FILE_TOOLS:
// add yours there, nowhere else.

/** The prompt a client module sends: the fake finds the path and content in it. */
export function fileTaskPrompt(file: string, content = 'hello'): string {
  return `Create the file ${file} containing ${content}`;
}

const TASK = /Create the file (\/[^\s"\\]+) containing ([A-Za-z0-9_-]+)/;

/** The file and content a request's text asks for (undefined: not a file task). */
export function fileTaskOf(text: string): { file: string; content: string } | undefined {
  const m = TASK.exec(text);
  return m ? { file: m[1]!, content: m[2]! } : undefined;
}

const shellWrite = (file: string, content: string) => `printf '%s' '${content}' > '${file}'`;

/** Tool name -> the arguments of a call that creates `file` holding `content`; the first name the request declares wins. */
export const FILE_TOOLS: { tool: string; client: string; args(file: string, content: string): Record<string, unknown> }[] = [
  { tool: 'Write', client: 'Claude Code', args: (file_path, content) => ({ file_path, content }) },
  { tool: 'write_file', client: 'Gemini CLI', args: (file_path, content) => ({ file_path, content }) },
  {
    tool: 'apply_patch',
    client: 'Codex CLI',
    args: (file, content) => ({ input: `*** Begin Patch\n*** Add File: ${file}\n+${content}\n*** End Patch\n` }),
  },
  { tool: 'exec_command', client: 'Codex CLI', args: (file, content) => ({ cmd: shellWrite(file, content) }) },
  { tool: 'shell', client: 'Codex CLI', args: (file, content) => ({ command: ['bash', '-lc', shellWrite(file, content)] }) },
  { tool: 'Bash', client: 'Claude Code', args: (file, content) => ({ command: shellWrite(file, content) }) },
];

/** Arguments for a tool no entry names: the common `{path, content}` shape. */
const GENERIC = (path: string, content: string) => ({ path, content });

/**
 * The call that does the file task of `requestText` with one of `toolNames`; undefined when the
 * request holds no task or declares no tool (the fake then answers with text).
 */
export function fileTaskCall(toolNames: string[], requestText: string): { name: string; arguments: string } | undefined {
  const task = fileTaskOf(requestText);
  if (!task || toolNames.length === 0) return undefined;
  for (const entry of FILE_TOOLS) {
    if (toolNames.includes(entry.tool)) return { name: entry.tool, arguments: JSON.stringify(entry.args(task.file, task.content)) };
  }
  const name = toolNames.find((n) => /write|create|file/i.test(n)) ?? toolNames[0]!;
  return { name, arguments: JSON.stringify(GENERIC(task.file, task.content)) };
}
