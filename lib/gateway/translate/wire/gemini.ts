// Google's Gemini wire format (generateContent, streamGenerateContent as SSE or a JSON array):
// the request, the reply (a GenerateContentResponse; each stream event is one too) and the
// error envelope.
import type { JsonObject } from './json';

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType: string; fileUri: string };
  /** `args` is an object from Gemini; one the gateway writes may carry a client's tool input as the client gave it. */
  functionCall?: { id?: string; name: string; args?: unknown };
  functionResponse?: { id?: string; name: string; response: JsonObject };
}

export interface GeminiContent {
  role?: 'user' | 'model';
  parts: GeminiPart[];
}

export interface FunctionDeclaration {
  name: string;
  description?: string;
  parameters?: JsonObject;
  parametersJsonSchema?: JsonObject;
}

export interface FunctionCallingConfig {
  mode: 'AUTO' | 'ANY' | 'NONE' | 'VALIDATED';
  allowedFunctionNames?: string[];
}

export interface GenerationConfig {
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  candidateCount?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  responseMimeType?: string;
  responseSchema?: JsonObject;
  responseJsonSchema?: JsonObject;
  thinkingConfig?: { thinkingBudget?: number; includeThoughts?: boolean; thinkingLevel?: string };
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: GeminiContent;
  tools?: { functionDeclarations?: FunctionDeclaration[] }[];
  toolConfig?: { functionCallingConfig?: FunctionCallingConfig };
  generationConfig?: GenerationConfig;
  safetySettings?: JsonObject[];
}

export type GeminiFinishReason = 'STOP' | 'MAX_TOKENS' | 'SAFETY' | 'RECITATION' | 'OTHER' | 'MALFORMED_FUNCTION_CALL' | (string & {});

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
  promptTokensDetails?: ModalityTokenCount[];
  candidatesTokensDetails?: ModalityTokenCount[];
}

export interface ModalityTokenCount {
  modality: string;
  tokenCount: number;
}

export interface GeminiCandidate {
  content?: GeminiContent;
  finishReason?: GeminiFinishReason;
  index?: number;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  /** An error inside a 200 (a stream event, or an array reply's element). */
  error?: GeminiErrorBody['error'];
}

export interface GeminiErrorBody {
  error: { code: number; message: string; status: string; details?: unknown[] };
}
